import XCTest
@testable import Torture

final class TortureSmokeTests: XCTestCase {
    func testModuleLinks() { XCTAssertNotNil(TortureModule.self) }
}
