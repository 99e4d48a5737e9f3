import Foundation
import Torture

/// The `fief db` commands a fuzz run tries on each damaged file of one kind, and what each
/// answered on the undamaged file and on its previous version.
struct FuzzCommandSet {
    struct Command {
        let name: String
        let arguments: [String]
        /// Its output must equal the undamaged file's (or the previous version's) when it
        /// succeeds; `stat` and `check` describe the file itself, so only their ending counts.
        let compared: Bool
        /// `check` exits 1 after printing the problems it found: a verdict, not an error.
        let reportsProblems: Bool
    }

    let corpus: FuzzCorpus

    func commands(on path: String) -> [Command] {
        let key = corpus.keyFile.map { ["--key-file", $0] } ?? []
        func c(_ name: String, _ args: [String], compared: Bool = true, reportsProblems: Bool = false) -> Command {
            Command(
                name: name, arguments: ["db"] + args.prefix(1) + [path] + key + args.dropFirst(), compared: compared,
                reportsProblems: reportsProblems)
        }
        var out = [c("stat", ["stat"], compared: false)]
        if corpus.kind.isObjects {
            out.append(c("check --objects", ["check", "--objects"], compared: false, reportsProblems: true))
            out.append(c("schema", ["schema", "--json"]))
            for cls in FuzzCorpus.objectClasses { out.append(c("query \(cls)", ["query", cls, "--json"])) }
            out.append(c("query by index", ["query", "GraphPerson", "name BEGINSWITH 'n1' OR name == 'r3'", "--json"]))
            out.append(
                c(
                    "query through links",
                    [
                        "query", "GraphPerson", "age > 30 AND ANY dogs.age < 8", "--sort", "name", "--limit", "10",
                        "--json"
                    ]))
            out.append(
                c("query backlinks", ["query", "GraphDog", "owners.@count > 0", "--sort", "age", "--desc", "--json"]))
        } else {
            out.append(c("check", ["check"], compared: false, reportsProblems: true))
            for t in FuzzCorpus.engineTables { out.append(c("scan \(t)", ["scan", t])) }
            out.append(c("get", ["get", "accounts", "7"]))
        }
        return out
    }
}
