import FluentKit
import Foundation

/// The models of the compatibility test, written by fluent-sqlite-driver into a plain file
/// (Tests/FluentDriver/FluentSQLiteFixture, which compiles this same file through a symbolic link) and read back
/// through FluentSQLCipherDriver once the file is encrypted: every kind of value fluent-sqlite-driver stores its own
/// way (UUID keys, Bool, Date, Double, an enum, JSON arrays and objects, blobs, optionals, timestamps) and a
/// parent with its children. Only FluentKit and Foundation here: the file builds against either driver.
enum CompatibilityFixture {
    enum Kind: String, Codable, CaseIterable, Sendable {
        case rocky, gasGiant = "gas_giant", dwarf
    }

    struct Atmosphere: Codable, Equatable, Sendable {
        var gases: [String: Double]
        var breathable: Bool
    }

    final class Star: Model, @unchecked Sendable {
        static let schema = "stars"
        @ID(key: .id) var id: UUID?
        @Field(key: "name") var name: String
        @Children(for: \.$star) var planets: [Planet]
        init() {}
        init(id: UUID, name: String) {
            self.id = id
            self.name = name
        }
    }

    final class Planet: Model, @unchecked Sendable {
        static let schema = "planets"
        @ID(key: .id) var id: UUID?
        @Field(key: "name") var name: String
        @Field(key: "mass") var mass: Double
        @Field(key: "habitable") var habitable: Bool
        @Field(key: "discovered") var discovered: Date
        @Enum(key: "kind") var kind: Kind
        @Field(key: "tags") var tags: [String]
        @OptionalField(key: "atmosphere") var atmosphere: Atmosphere?
        @OptionalField(key: "moons") var moons: Int?
        @Field(key: "signature") var signature: Data
        @Parent(key: "star_id") var star: Star
        @Timestamp(key: "created_at", on: .create) var createdAt: Date?
        @Timestamp(key: "updated_at", on: .update) var updatedAt: Date?
        init() {}
    }

    /// The schema, as an app's migration would create it (a unique name, a foreign key to the star).
    static func migrate(on database: any Database) async throws {
        let kind = try await database.enum("planet_kind").case("rocky").case("gas_giant").case("dwarf").create()
        try await database.schema(Star.schema).id().field("name", .string, .required).unique(on: "name").create()
        try await database.schema(Planet.schema).id()
            .field("name", .string, .required)
            .field("mass", .double, .required)
            .field("habitable", .bool, .required)
            .field("discovered", .datetime, .required)
            .field("kind", kind, .required)
            .field("tags", .array(of: .string), .required)
            .field("atmosphere", .json)
            .field("moons", .int)
            .field("signature", .data, .required)
            .field("star_id", .uuid, .required, .references(Star.schema, .id))
            .field("created_at", .datetime)
            .field("updated_at", .datetime)
            .unique(on: "name")
            .create()
    }

    /// The rows fluent-sqlite-driver writes (fixed identifiers and values; the timestamps are the writer's clock).
    static func write(on database: any Database) async throws {
        try await migrate(on: database)
        let sun = Star(id: UUID(uuidString: "5A3F1B9E-7C2D-4E8A-9B1F-0D6C2E4A8B10")!, name: "Sol")
        let trappist = Star(id: UUID(uuidString: "C0FFEE00-1234-4ABC-8DEF-0123456789AB")!, name: "TRAPPIST-1")
        try await sun.create(on: database)
        try await trappist.create(on: database)
        let planets: [(String, Double, Bool, Double, Kind, [String], Atmosphere?, Int?, [UInt8], Star)] = [
            ("Earth", 5.972e24, true, -14_182_940_000.123456, .rocky, ["home", "blue"],
             Atmosphere(gases: ["N2": 0.7808, "O2": 0.2095], breathable: true), 1, [0, 1, 2, 255], sun),
            ("Jupiter", 1.898e27, false, -11_676_096_000.5, .gasGiant, [],
             Atmosphere(gases: ["H2": 0.898, "He": 0.102], breathable: false), 95, [0xCA, 0xFE], sun),
            ("Pluto", 1.303e22, false, -1_255_046_400.25, .dwarf, ["demoted"], nil, 5, [], sun),
            ("TRAPPIST-1e", 4.6e24, true, 1_487_721_600.000001, .rocky, ["candidate", "tidally locked"], nil, nil,
             [7], trappist),
        ]
        for (index, entry) in planets.enumerated() {
            let planet = Planet()
            planet.id = UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", index + 1))!
            planet.name = entry.0
            planet.mass = entry.1
            planet.habitable = entry.2
            planet.discovered = Date(timeIntervalSince1970: entry.3)
            planet.kind = entry.4
            planet.tags = entry.5
            planet.atmosphere = entry.6
            planet.moons = entry.7
            planet.signature = Data(entry.8)
            planet.$star.id = try entry.9.requireID()
            try await planet.create(on: database)
        }
        // An update, so that one row's updated_at differs from its created_at.
        if let pluto = try await Planet.query(on: database).filter(\.$name == "Pluto").first() {
            pluto.tags.append("plutoid")
            try await pluto.update(on: database)
        }
    }

    /// Every star with its planets, as JSON (sorted keys, by name): what the models read back as.
    static func read(on database: any Database) async throws -> String {
        let stars = try await Star.query(on: database).with(\.$planets).sort(\.$name).all()
        for star in stars {
            star.$planets.value = star.planets.sorted { $0.name < $1.name }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return String(decoding: try encoder.encode(stars), as: UTF8.self)
    }
}
