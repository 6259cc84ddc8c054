# shellcheck shell=bash
# Phase "Swift static library": the SQLCipherKit product and the sqlcipherkit CLI, release builds with this
# checkout's path kept out of the objects. Sets SWIFT_BIN, SWIFT_ARCHIVE and CLI_EXECUTABLE.

build_swift() {
    # The prefix maps keep this checkout's path out of the objects (debug info, #file strings).
    (cd "$ROOT" && swift build -c release --product SQLCipherKit \
        -Xswiftc -file-prefix-map -Xswiftc "$ROOT=.") || die "swift build of the SQLCipherKit product failed"
    SWIFT_BIN=$(cd "$ROOT" && swift build -c release --show-bin-path)
    SWIFT_ARCHIVE=$SWIFT_BIN/libSQLCipherKit.a
    note "Swift static library: $SWIFT_ARCHIVE"
    # The CLI, with the Swift runtime linked in, so dist/bin/sqlcipherkit runs without a Swift toolchain.
    (cd "$ROOT" && swift build -c release --product sqlcipherkit --static-swift-stdlib \
        -Xswiftc -file-prefix-map -Xswiftc "$ROOT=.") || die "swift build of the sqlcipherkit CLI failed"
    CLI_EXECUTABLE=$SWIFT_BIN/sqlcipherkit
    [ -x "$CLI_EXECUTABLE" ] || die "the sqlcipherkit executable was not built"
    note "CLI: $CLI_EXECUTABLE"
}
