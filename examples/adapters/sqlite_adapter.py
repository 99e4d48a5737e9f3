#!/usr/bin/env python3
"""A Fief torture adapter over Python's sqlite3 module, configured to be crash-safe:
WAL journal, synchronous=FULL (every commit's WAL frames are synced before COMMIT returns).

    fief torture run --target exec:"python3 examples/adapters/sqlite_adapter.py"

The protocol: one JSON request per line on stdin, one JSON answer per line on stdout.
"""
import json
import os
import sqlite3
import sys


class Store:
    def __init__(self, directory):
        # isolation_level=None: no implicit transactions; BEGIN and COMMIT are ours.
        self.db = sqlite3.connect(os.path.join(directory, "db.sqlite"), isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("CREATE TABLE IF NOT EXISTS kv(k TEXT PRIMARY KEY, v TEXT NOT NULL)")

    def handle(self, r):
        op = r["op"]
        if op == "begin":
            self.db.execute("BEGIN IMMEDIATE" if r.get("mode", "write") == "write" else "BEGIN")
            return {"ok": True}
        if op == "put":
            self.db.execute("INSERT OR REPLACE INTO kv(k, v) VALUES(?, ?)", (r["key"], r["value"]))
            return {"ok": True}
        if op == "delete":
            self.db.execute("DELETE FROM kv WHERE k = ?", (r["key"],))
            return {"ok": True}
        if op == "get":
            row = self.db.execute("SELECT v FROM kv WHERE k = ?", (r["key"],)).fetchone()
            return {"value": row[0] if row else None}
        if op == "scan":
            rows = self.db.execute("SELECT k, v FROM kv WHERE k >= ? AND k < ? ORDER BY k", (r["from"], r["to"])).fetchall()
            return {"pairs": [[k, v] for k, v in rows]}
        if op == "commit":
            self.db.execute("COMMIT")
            return {"ok": True}
        if op == "rollback":
            self.db.execute("ROLLBACK")
            return {"ok": True}
        if op == "check":
            rows = [row[0] for row in self.db.execute("PRAGMA integrity_check")]
            return {"problems": [] if rows == ["ok"] else rows}
        if op == "close":
            self.db.close()
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
                answer = {"ok": True, "transactions": True}
            elif store is None:
                answer = {"error": "not open"}
            else:
                answer = store.handle(request)
        except Exception as e:  # every failure is an answer, never a dead adapter
            answer = {"error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
        if request.get("op") == "close":
            return


if __name__ == "__main__":
    main()
