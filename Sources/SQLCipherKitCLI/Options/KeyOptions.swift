import ArgumentParser

/// The key options of every command that opens a database.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("key-env"), help: ArgumentHelp("Read the key from this environment variable.",
                                                             valueName: "NAME"))
    var environmentVariable: String?

    @Option(name: .customLong("key-file"), help: ArgumentHelp("Read the key from this file (its bytes minus one trailing newline).", valueName: "PATH"))
    var file: String?

    @Flag(name: .customLong("key-stdin"), help: "Read the key from standard input.")
    var standardInput = false

    @Flag(name: .customLong("raw"), help: "The key is hex: 64 digits for a raw key, 96 for a raw key and its salt.")
    var raw = false

    var source: KeySource {
        KeySource(environmentVariable: environmentVariable, file: file, standardInput: standardInput, raw: raw)
    }

    func validate() throws {
        try source.validate(flagPrefix: "")
    }
}
