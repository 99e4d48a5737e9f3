import ArgumentParser
import Engine
import Foundation
import Reports

func printFlushed(_ line: String) {
    print(line)
    fflush(stdout)
}
