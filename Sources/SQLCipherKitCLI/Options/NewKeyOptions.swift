import ArgumentParser

/// The new key of `rekey`.
struct NewKeyOptions: ParsableArguments {
    @Option(name: .customLong("new-key-env"), help: ArgumentHelp("Read the new key from this environment variable.", valueName: "NAME"))
    var environmentVariable: String?

    @Option(name: .customLong("new-key-file"), help: ArgumentHelp("Read the new key from this file.", valueName: "PATH"))
    var file: String?

    @Flag(name: .customLong("new-raw"), help: "The new key is hex: 64 or 96 digits.")
    var raw = false

    var source: KeySource {
        KeySource(environmentVariable: environmentVariable, file: file, standardInput: false, raw: raw)
    }

    func validate() throws {
        try source.validate(flagPrefix: "new-")
    }
}
