import XCTest
@testable import Engine
import SeededRandomness
@_exported import FiefTestSupport

