import Foundation
import ProcessTestSupport
import Testing

@Suite("FluentSQLCipherDriver package beside the release package", .serialized, .timeLimit(.minutes(30)))
struct DriverPackageTests {
    static let driverPackage = Repository.dist + "/swiftpm/FluentSQLCipherDriver"
    static let releasePackage = Repository.dist + "/swiftpm/SQLCipherKit"
    static let consumerExample = Repository.path("Examples/FluentDriverConsumer")

    @Test("the driver package depends on SQLCipherKit by URL and version, on sql-kit and fluent-kit, and nothing else")
    func contents() throws {
        try Repository.requireBuild()
        let manifest = try String(contentsOfFile: Self.driverPackage + "/Package.swift", encoding: .utf8)
        let packages = manifest.split(separator: "\n").filter { $0.contains(".package(") }
        #expect(packages.count == 3, "\(packages)")
        #expect(packages.contains { $0.contains("SQLCipherKit\", from: \"") }, "\(packages)")
        #expect(packages.contains { $0.contains(#""https://github.com/vapor/sql-kit", from: "3.36.0""#) })
        #expect(packages.contains { $0.contains(#""https://github.com/vapor/fluent-kit", from: "1.57.0""#) })
        #expect(!manifest.contains("path:") && !manifest.contains("unsafeFlags"))
        #expect(!manifest.contains("sqlite-nio") && !manifest.contains("sqlite-kit"))
        // The sources are the repository's.
        let diff = try run("/usr/bin/diff", ["-r", Repository.path("Drivers/FluentSQLCipherDriver/Sources"),
                                             Self.driverPackage + "/Sources"])
        #expect(diff.status == 0, "\(diff)")
        // The release package gains no dependency.
        let release = try String(contentsOfFile: Self.releasePackage + "/Package.swift", encoding: .utf8)
        #expect(!release.contains("fluent") && !release.contains("sql-kit"))
    }

    @Test("an app with two .package(url: \"file://…\", from:) lines runs FluentKit models on an encrypted file")
    func consumer() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        // Both packages as release repositories would hold them: git repositories, tagged; the driver's manifest
        // names the SQLCipherKit repository's URL (Tests/Support/release-repositories.sh, shared with the app
        // examples' tests); the consumer's marked lines name both (Tests/Support/use-release-repositories.py).
        let repositories = try run(Repository.path("Tests/Support/release-repositories.sh"), [folder.path])
        try #require(repositories.status == 0, "\(repositories)")

        let consumer = folder.file("consumer")
        #expect(try run("/bin/cp", ["-R", Self.consumerExample, consumer]).status == 0)
        try? FileManager.default.removeItem(atPath: consumer + "/.build")
        let manifest = try String(contentsOfFile: consumer + "/Package.swift", encoding: .utf8)
        let rewrite = try run("/usr/bin/env", ["python3", Repository.path("Tests/Support/use-release-repositories.py"),
                                               consumer + "/Package.swift", folder.path])
        try #require(rewrite.status == 0, "\(rewrite)")
        #expect(try String(contentsOfFile: consumer + "/Package.swift", encoding: .utf8) != manifest)

        let build = try run("/usr/bin/env", ["swift", "build", "--package-path", consumer])
        try #require(build.status == 0, "\(build)")
        let bin = try run("/usr/bin/env", ["swift", "build", "--package-path", consumer, "--show-bin-path"])
        let program = bin.output.trimmingCharacters(in: .whitespacesAndNewlines) + "/fluent-consumer"
        let data = folder.file("data")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let marker = "fluent-marker-\(UUID().uuidString)"
        let result = try run(program, [data, marker], environment: ["FLUENT_CONSUMER_KEY": "consumer \(UUID().uuidString)"])
        #expect(result.status == 0, "\(result)")
        for line in ["children 1 genre fiction pages 300", "timestamp true", "unique enforced", "foreign key enforced",
                     "wrong key refused"] {
            #expect(result.output.contains(line), "\(line): \(result)")
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: data + "/fluent.db"))
        #expect(bytes.prefix(16) != Data("SQLite format 3\0".utf8))
        #expect(bytes.range(of: Data(marker.utf8)) == nil, "the marker is readable in the file")
        let resolved = try String(contentsOfFile: consumer + "/Package.resolved", encoding: .utf8)
        #expect(!resolved.contains("sqlite-nio") && !resolved.contains("sqlite-kit"), "\(resolved)")
    }
}
