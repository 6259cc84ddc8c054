import Foundation
import ProcessTestSupport
import Testing

@Suite("FluentSQLCipherDriver package beside the release package")
struct DriverPackageTests {
    static let driverPackage = Repository.dist + "/swiftpm/FluentSQLCipherDriver"
    static let releasePackage = Repository.dist + "/swiftpm/SQLCipherKit"

    @Test("the driver package depends on SQLCipherKit by URL and version, on sql-kit, fluent-kit and swift-log, and nothing else")
    func contents() throws {
        try Repository.requireBuild()
        let manifest = try String(contentsOfFile: Self.driverPackage + "/Package.swift", encoding: .utf8)
        let packages = manifest.split(separator: "\n").filter { $0.contains(".package(") }
        #expect(packages.count == 4, "\(packages)")
        #expect(packages.contains { $0.contains("SQLCipherKit\", from: \"") }, "\(packages)")
        #expect(packages.contains { $0.contains(#""https://github.com/vapor/sql-kit", from: "3.36.0""#) })
        #expect(packages.contains { $0.contains(#""https://github.com/vapor/fluent-kit", from: "1.57.0""#) })
        // swift-log's task-local logger (withLogger), which the driver binds for an observer.
        #expect(packages.contains { $0.contains(#""https://github.com/apple/swift-log", from: "1.16.2""#) })
        #expect(manifest.contains(#".product(name: "Logging", package: "swift-log")"#), "swift-log required, not used")
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

    @Test("the observability bridge's package depends on SQLCipherKit by URL and version, on swift-log, swift-metrics and swift-distributed-tracing, and nothing else")
    func observabilityBridge() throws {
        try Repository.requireBuild()
        let bridge = Repository.dist + "/swiftpm/SQLCipherKitObservability"
        let manifest = try String(contentsOfFile: bridge + "/Package.swift", encoding: .utf8)
        let packages = manifest.split(separator: "\n").filter { $0.contains(".package(") }
        #expect(packages.count == 4, "\(packages)")
        #expect(packages.contains { $0.contains("SQLCipherKit\", from: \"") }, "\(packages)")
        for (name, version) in [("apple/swift-log", "1.16.2"), ("apple/swift-metrics", "2.13.0"),
                                ("apple/swift-distributed-tracing", "1.7.0")] {
            #expect(packages.contains { $0.contains("\"https://github.com/\(name)\", from: \"\(version)\"") },
                    "\(name) \(version): \(packages)")
        }
        #expect(!manifest.contains("path:") && !manifest.contains("unsafeFlags") && !manifest.contains("testTarget"))
        let diff = try run("/usr/bin/diff", ["-r", Repository.path("Drivers/SQLCipherKitObservability/Sources"),
                                             bridge + "/Sources"])
        #expect(diff.status == 0, "\(diff)")
        // The release package gains no dependency.
        let release = try String(contentsOfFile: Self.releasePackage + "/Package.swift", encoding: .utf8)
        #expect(!release.contains("swift-log") && !release.contains("swift-metrics") && !release.contains("tracing"))
    }

    // The app that adds the two packages by URL and runs FluentKit models on an encrypted file is built and run by
    // Tests/Examples/run-app-examples.sh (Examples/FluentDriverConsumer), in the build folder the driver's and the
    // app examples' builds share.
}
