import XCTest
@testable import Engine
final class EngineSmokeTests: XCTestCase { func testLinks() { XCTAssertNotNil(EngineModule.self) } }
