import ArgumentParser

/// The new key of `rekey`, and the copy's key of `backup`.
struct NewKeyOptions: ParsableArguments {
    @Option(name: .customLong("new-key-env"), help: ArgumentHelp("Read the new key from this environment variable.", valueName: "NAME"))
    var environmentVariable: String?

    @Option(name: .customLong("new-key-file"), help: ArgumentHelp("Read the new key from this file (owned by this user, chmod 600).", valueName: "PATH"))
    var file: String?

    @Option(name: .customLong("new-key-credential"), help: ArgumentHelp("Read the new key from the systemd credential NAME.", valueName: "NAME"))
    var credential: String?

    @Flag(name: .customLong("new-raw"), help: "The new key is hex: 64 or 96 digits.")
    var raw = false

    /// `--new-key`, `--new-password`: refused, naming the new key's sources (see ``KeyOptions``).
    @Option(name: [.customLong("new-key"), .customLong("new-password")], help: .hidden)
    var keyOnCommandLine: String?

    var source: KeySource {
        KeySource(environmentVariable: environmentVariable, file: file, credential: credential, standardInput: false,
                  raw: raw, flagPrefix: "new-")
    }

    func validate() throws {
        guard keyOnCommandLine == nil else { throw ValidationError(KeySource.noKeyArguments(flagPrefix: "new-")) }
        try source.validate(flagPrefix: "new-")
    }
}
