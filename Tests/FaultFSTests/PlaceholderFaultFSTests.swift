import XCTest
@testable import FaultFS

final class FaultFSSmokeTests: XCTestCase {
    func testModuleLinks() { XCTAssertNotNil(FaultFSModule.self) }
}
