#!/usr/bin/env python3
"""Sums `perf report --sort dso,sym` lines (demangled, on standard input) by component (Benchmarks/Load/profile.sh)."""
import re
import sys

RULES = [
    ("codec and crypto: SQLCipher's page codec, libcrypto (AES, HMAC, SHA)", r"sqlcipher|codec|libcrypto|AES|aes_|sha512|sha256|SHA|HMAC|hmac|pbkdf|EVP_|OPENSSL|CRYPTO_|ossl_"),
    ("the kernel (syscalls, networking, futexes, fsync)", r"\[kernel|\[k\]"),
    ("SQLite itself (either engine)", r"sqlite3|sqlite_nio|Vdbe|btree|pager|Pager|Btree|yy_|walIndex|wal[A-Z]"),
    ("sqlite-nio, sqlite-kit, fluent-sqlite-driver", r"SQLiteNIO|SQLiteKit|FluentSQLiteDriver"),
    ("Examples/VaporTodo's code and the server", r"VaporTodo|todo_load_server"),
    ("SQLCipherKit and FluentSQLCipherDriver (Swift)", r"SQLCipherKit|SQLCipherSQLKit|FluentSQLCipherDriver"),
    ("Fluent, FluentKit, SQLKit", r"FluentKit|SQLKit|Fluent\.|FluentBenchmark"),
    ("Vapor, routing, HTTP, JSON (Foundation)", r"Vapor|RoutingKit|NIOHTTP1|HTTP|JSON|Foundation|Codable|Decoder|Encoder"),
    ("NIO (event loops, channels)", r"NIO"),
    ("the Swift runtime, allocation, concurrency", r"swift_|libswiftCore|libswift_Concurrency|malloc|free|libc\.so|pthread|__memmove|__memcpy|memset|memcmp|strlen"),
]


# Inclusive (children) shares of single functions: the engine's statements, the codec, the syncs, key derivation.
STEPS = [
    ("SQLite statements run (sqlite3_step, either engine; includes the codec and I/O)", r"\bsqlite3_step$|sqlite_nio_sqlite3_step$"),
    ("statements prepared (sqlite3_prepare*, either engine)", r"\bsqlite3_prepare_v[23]$|\bsqlite3_prepare$|sqlite_nio_sqlite3_prepare_v[23]$"),
    ("SQLCipher's page codec (sqlite3Codec: decrypt on read, encrypt on write)", r"\bsqlite3Codec$|sqlcipher_page_cipher$"),
    ("PBKDF2 key derivation", r"PBKDF2|pbkdf2"),
    ("fsync/fdatasync (the syncs of commits)", r"\b(fdatasync|fsync|__x64_sys_fdatasync|__x64_sys_fsync)$"),
    ("pread/pwrite (file reads and writes)", r"\b(__libc_pread64|__libc_pwrite64|pread64|pwrite64|__pread64|__pwrite64)$"),
    ("futex waits and wake-ups (threads handing work over)", r"\b(__x64_sys_futex|futex_wait|futex_wake)$"),
]


def inclusive():
    found = {}
    for line in sys.stdin:
        match = re.match(r"\s*([0-9.]+)%\s+([0-9.]+)%\s+\[[.k]\]\s+(.*?)\s*$", line)
        if not match:
            continue
        children, symbol = float(match.group(1)), match.group(3)
        for name, pattern in STEPS:
            if re.search(pattern, symbol):
                found[name] = max(found.get(name, 0.0), children)
    for name, _ in STEPS:
        print(f"{found.get(name, 0.0):6.1f} %  {name}")


def main():
    if "--inclusive" in sys.argv:
        inclusive()
        return
    totals, other = {}, 0.0
    for line in sys.stdin:
        match = re.match(r"\s*([0-9.]+)%\s+(.*)", line)
        if not match:
            continue
        share, rest = float(match.group(1)), match.group(2)
        for name, pattern in RULES:
            if re.search(pattern, rest):
                totals[name] = totals.get(name, 0.0) + share
                break
        else:
            other += share
    for name, _ in RULES:
        print(f"{totals.get(name, 0.0):6.1f} %  {name}")
    print(f"{other:6.1f} %  other")


if __name__ == "__main__":
    main()
