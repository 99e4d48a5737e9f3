import ArgumentParser
import FaultFS

struct FaultFSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faultfs",
        abstract: "A FUSE filesystem that injects storage faults."
    )
}
