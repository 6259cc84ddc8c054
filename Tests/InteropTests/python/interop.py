"""The other side of SQLCipherKit's interoperability tests: an independently built SQLCipher (the sqlcipher3
wheel, which bundles its own SQLCipher, SQLite and OpenSSL) writing and reading encrypted databases.

Usage (run with the test's virtual environment's python):
  interop.py facts                      print the engine facts as JSON
  interop.py write PATH [--raw] [--compat N]
                                        create PATH with table `interop`, rows read as JSON from stdin
  interop.py read PATH [--raw] [--compat N]
                                        print the facts, both integrity checks and the rows of `interop`

The key comes from the environment variable INTEROP_KEY, never from the command line: a passphrase, or with
--raw 64 hex digits (raw key) or 96 (raw key and salt), given to SQLCipher in its x'…' form. Nothing this
script prints contains the key.

Values travel as tagged JSON so that nothing is lost on the way: {"type": "integer", "value": "<decimal>"},
{"type": "real", "bits": "<16 hex digits of the IEEE 754 double, big-endian>"}, {"type": "text", "value": s},
{"type": "blob", "hex": h}, {"type": "null"}.

Exit status: 0 ok; 3 wrong key or not a database; 2 usage; 1 anything else (one line on stderr).
"""

import argparse
import importlib.metadata
import json
import os
import re
import struct
import sys

import sqlcipher3

TABLE_SQL = "CREATE TABLE interop(id INTEGER PRIMARY KEY, i INTEGER, r REAL, t TEXT, b BLOB)"
KEY_VARIABLE = "INTEROP_KEY"
EXIT_WRONG_KEY = 3


class Failure(Exception):
    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


def tag(value):
    if value is None:
        return {"type": "null"}
    if isinstance(value, int):
        return {"type": "integer", "value": str(value)}
    if isinstance(value, float):
        return {"type": "real", "bits": struct.pack(">d", value).hex()}
    if isinstance(value, str):
        return {"type": "text", "value": value}
    if isinstance(value, bytes):
        return {"type": "blob", "hex": value.hex()}
    raise Failure(f"unexpected value type {type(value).__name__}")


def untag(tagged):
    kind = tagged["type"]
    if kind == "null":
        return None
    if kind == "integer":
        return int(tagged["value"])
    if kind == "real":
        return struct.unpack(">d", bytes.fromhex(tagged["bits"]))[0]
    if kind == "text":
        return tagged["value"]
    if kind == "blob":
        return bytes.fromhex(tagged["hex"])
    raise Failure(f"unknown value type {kind!r}", status=2)


# Set by --sha256 (main).
SHA256 = False


def key_pragma(raw):
    """The PRAGMA key statement for INTEROP_KEY. The key is checked here so that a malformed one fails with a
    message that does not repeat it."""
    key = os.environ.get(KEY_VARIABLE)
    if not key:
        raise Failure(f"set {KEY_VARIABLE} to the key", status=2)
    if raw:
        if not re.fullmatch(r"[0-9A-Fa-f]{64}|[0-9A-Fa-f]{96}", key):
            raise Failure(f"--raw: {KEY_VARIABLE} must hold 64 or 96 hex digits", status=2)
        return f"PRAGMA key = \"x'{key}'\""
    return "PRAGMA key = '" + key.replace("'", "''") + "'"


def connect(path, raw, compat):
    # isolation_level=None: no implicit transactions; the script commits explicitly.
    connection = sqlcipher3.connect(path, isolation_level=None)
    connection.execute(key_pragma(raw))
    if compat is not None:
        connection.execute(f"PRAGMA cipher_compatibility = {int(compat)}")
    if SHA256:
        # SQLCipherKit's CipherSettings.sha256: SQLCipher 4 with SHA-256 for the page HMAC and the KDF.
        connection.execute("PRAGMA cipher_hmac_algorithm = HMAC_SHA256")
        connection.execute("PRAGMA cipher_kdf_algorithm = PBKDF2_HMAC_SHA256")
    try:
        # The first read decrypts page 1: this is where a wrong key shows.
        connection.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    except sqlcipher3.DatabaseError as error:
        connection.close()
        raise Failure(f"cannot open {path}: {error}", status=EXIT_WRONG_KEY) from None
    return connection


def facts():
    connection = sqlcipher3.connect(":memory:")
    # cipher_provider answers only on a keyed connection.
    connection.execute("PRAGMA key = 'facts'")
    answer = {
        "module": "sqlcipher3",
        "module_version": importlib.metadata.version("sqlcipher3"),
        "cipher_version": connection.execute("PRAGMA cipher_version").fetchone()[0],
        "cipher_provider": connection.execute("PRAGMA cipher_provider").fetchone()[0],
        "cipher_provider_version": connection.execute("PRAGMA cipher_provider_version").fetchone()[0],
        "sqlite_version": connection.execute("SELECT sqlite_version()").fetchone()[0],
    }
    connection.close()
    return answer


def write(path, raw, compat):
    rows = [[untag(value) for value in row] for row in json.load(sys.stdin)]
    if os.path.exists(path):
        raise Failure(f"{path} exists: write only creates databases")
    connection = connect(path, raw, compat)
    connection.execute("BEGIN")
    connection.execute(TABLE_SQL)
    connection.executemany("INSERT INTO interop(id, i, r, t, b) VALUES (?, ?, ?, ?, ?)", rows)
    connection.execute("COMMIT")
    connection.close()
    return {"written": len(rows)}


def read(path, raw, compat):
    connection = connect(path, raw, compat)
    answer = facts()
    answer["integrity_check"] = [row[0] for row in connection.execute("PRAGMA integrity_check")]
    answer["cipher_integrity_check"] = [row[0] for row in connection.execute("PRAGMA cipher_integrity_check")]
    answer["rows"] = [
        [tag(value) for value in row]
        for row in connection.execute("SELECT id, i, r, t, b FROM interop ORDER BY id")
    ]
    connection.close()
    return answer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["facts", "write", "read"])
    parser.add_argument("path", nargs="?")
    parser.add_argument("--raw", action="store_true", help="INTEROP_KEY holds a raw key in hex")
    parser.add_argument("--compat", type=int, choices=[1, 2, 3, 4], help="PRAGMA cipher_compatibility")
    parser.add_argument("--sha256", action="store_true",
                        help="HMAC_SHA256 and PBKDF2_HMAC_SHA256 (SQLCipherKit's CipherSettings.sha256)")
    arguments = parser.parse_args()
    global SHA256
    SHA256 = arguments.sha256
    try:
        if arguments.command == "facts":
            answer = facts()
        elif arguments.path is None:
            raise Failure(f"{arguments.command} needs a PATH", status=2)
        elif arguments.command == "write":
            answer = write(arguments.path, arguments.raw, arguments.compat)
        else:
            answer = read(arguments.path, arguments.raw, arguments.compat)
    except Failure as failure:
        print(f"interop.py: error: {failure}", file=sys.stderr)
        return failure.status
    except sqlcipher3.Error as error:
        print(f"interop.py: error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    json.dump(answer, sys.stdout, ensure_ascii=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
