#!/usr/bin/env python3
"""A deliberately UNSAFE Fief torture adapter: the whole store is one JSON file, rewritten in
place at every commit, with no fsync and no write-to-temp-and-rename. A process killed while
it writes leaves a truncated file; a power cut leaves whatever the page cache had flushed.
The torture suite must catch it:

    fief torture run --target exec:"python3 examples/adapters/unsafe_adapter.py"

It says it has no transactions across processes, so the isolation scenario skips it; with
--claim-transactions it claims them, and the isolation checker must catch the lie (each process
works on its own copy of the store and overwrites the others').
"""
import json
import os
import sys


class Store:
    def __init__(self, directory):
        self.path = os.path.join(directory, "store.json")
        self.data = {}
        if os.path.exists(self.path):
            with open(self.path) as f:
                text = f.read()
            # An empty file is an empty store (it was created, nothing ever reached the disk).
            self.data = json.loads(text) if text else {}
        else:
            self.save()
        self.before = None

    def save(self):
        with open(self.path, "w") as f:  # truncates, then writes: the unsafe part
            json.dump(self.data, f)

    def handle(self, r):
        op = r["op"]
        if op == "begin":
            self.before = dict(self.data)
            return {"ok": True}
        if op == "put":
            self.data[r["key"]] = r["value"]
            return {"ok": True}
        if op == "delete":
            self.data.pop(r["key"], None)
            return {"ok": True}
        if op == "get":
            return {"value": self.data.get(r["key"])}
        if op == "scan":
            keys = sorted(k for k in self.data if r["from"] <= k < r["to"])
            return {"pairs": [[k, self.data[k]] for k in keys]}
        if op == "commit":
            self.save()
            return {"ok": True}
        if op == "rollback":
            self.data = self.before
            return {"ok": True}
        if op == "check":
            try:
                with open(self.path) as f:
                    json.loads(f.read() or "{}")
                return {"problems": []}
            except ValueError as e:
                return {"problems": ["store.json does not parse: %s" % e]}
        if op == "close":
            return {"ok": True}
        return {"error": "unknown op " + op}


def main():
    store = None
    for line in sys.stdin:
        request = {}
        try:
            request = json.loads(line)
            if request["op"] == "open":
                store = Store(request["dir"])
                answer = {"ok": True, "transactions": "--claim-transactions" in sys.argv}
            elif store is None:
                answer = {"error": "not open"}
            else:
                answer = store.handle(request)
        except Exception as e:
            answer = {"error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
        if request.get("op") == "close":
            return


if __name__ == "__main__":
    main()
