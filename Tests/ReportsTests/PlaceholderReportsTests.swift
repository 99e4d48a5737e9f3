import XCTest
@testable import Reports

final class ReportsSmokeTests: XCTestCase {
    func testModuleLinks() { XCTAssertNotNil(ReportsModule.self) }
}
