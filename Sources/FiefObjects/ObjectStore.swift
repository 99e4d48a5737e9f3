import Engine
import Foundation

/// How to open an object store.
public struct Configuration: Sendable {
    public var path: String
    /// The model classes this code uses. Other classes in the file are left untouched.
    public var types: [Object.Type]
    public var schemaVersion: UInt64
    /// Runs inside the one write transaction that moves an older file to `schemaVersion`.
    public var migrationBlock: (@Sendable (Migration, UInt64) throws -> Void)?
    /// Instead of migrating, delete the file and start empty (for caches).
    public var deleteIfMigrationNeeded: Bool
    /// Asked on open with (file size, bytes in use); true compacts the file first.
    public var shouldCompactOnOpen: (@Sendable (UInt64, UInt64) -> Bool)?
    public var readOnly: Bool
    public var durability: Durability
    /// Names a store that lives in memory (tmpfs) while any handle, in any process, has it
    /// open. Leave `path` empty: the opened store's `configuration.path` names the file (see
    /// `InMemoryFiles`).
    public var inMemoryIdentifier: String?
    /// At most this many versions live at once (the newest and those readers pin, in every
    /// process): a write that would make one more throws `ObjectError.tooManyLiveVersions`.
    /// A reader stuck on an old version then stops writers instead of growing the file
    /// without bound. nil: no limit. At least 2.
    public var maximumLiveVersions: Int?
    /// 64 bytes (AES-256 key, then HMAC-SHA256 key): the file is encrypted, every page
    /// authenticated on read (`EncryptionError` for a wrong, missing or misshapen key).
    /// Compaction keeps it; `ObjectStore.database.writeCopy(to:encryptionKey:)` changes it.
    public var encryptionKey: [UInt8]?
    /// Check every node's checksum as it is read (`DatabaseOptions.verifyChecksums`): a damaged
    /// plain file then gives `EngineError.corrupt` instead of wrong values. Encrypted files
    /// authenticate every page whatever this says. Off by default, as in the engine.
    public var verifyChecksums = false

    public init(
        path: String, types: [Object.Type], schemaVersion: UInt64 = 0,
        migrationBlock: (@Sendable (Migration, UInt64) throws -> Void)? = nil,
        deleteIfMigrationNeeded: Bool = false,
        shouldCompactOnOpen: (@Sendable (UInt64, UInt64) -> Bool)? = nil,
        readOnly: Bool = false, durability: Durability = .full, encryptionKey: [UInt8]? = nil
    ) {
        self.encryptionKey = encryptionKey
        self.path = path
        self.types = types
        self.schemaVersion = schemaVersion
        self.migrationBlock = migrationBlock
        self.deleteIfMigrationNeeded = deleteIfMigrationNeeded
        self.shouldCompactOnOpen = shouldCompactOnOpen
        self.readOnly = readOnly
        self.durability = durability
    }

    /// A store shared by every context, thread and process that uses `identifier`, kept in
    /// memory (tmpfs) and removed when the last of them closes it. Durability is `.none`.
    public init(
        inMemoryIdentifier identifier: String, types: [Object.Type], schemaVersion: UInt64 = 0,
        migrationBlock: (@Sendable (Migration, UInt64) throws -> Void)? = nil
    ) {
        self.init(
            path: "", types: types, schemaVersion: schemaVersion, migrationBlock: migrationBlock, durability: .none)
        inMemoryIdentifier = identifier
    }
}

/// An open object database. Share it between threads; give each thread (or actor) its own
/// `context()`.
public final class ObjectStore: @unchecked Sendable {
    public let configuration: Configuration
    public let database: Database
    let models: [String: ModelInfo]
    /// The stored schema as of the last stamp seen, so a transaction decodes it only after a
    /// migration changed it.
    private let schemaCache = Locked<(stamp: Int64, schema: StoredSchema)?>(nil)

    /// Set on the store that opened an in-memory file: its close may remove the files.
    private let inMemory: InMemoryFiles?

    init(configuration: Configuration, database: Database, models: [String: ModelInfo], inMemory: InMemoryFiles? = nil)
    {
        self.configuration = configuration
        self.database = database
        self.models = models
        self.inMemory = inMemory
    }

    /// Closing: the last handle on an in-memory store, in any process, removes its files (and
    /// closes the handle, for whoever kept `database` past the store).
    deinit { inMemory?.close(database) }

    /// Opens (or creates) the file, checks its schema against `types`, and migrates it when
    /// `schemaVersion` is higher than the file's. An in-memory configuration opens the store
    /// its identifier names, or a new empty one; `configuration.path` then names its file.
    public convenience init(_ configuration: Configuration) throws {
        let models = try SchemaValidation.models(configuration.types)
        if let m = configuration.maximumLiveVersions, m < 2 { throw ConfigurationError.maximumLiveVersionsTooSmall(m) }
        guard let id = configuration.inMemoryIdentifier else {
            self.init(
                configuration: configuration, database: try ObjectStore.open(configuration, models: models),
                models: models)
            return
        }
        let files = try InMemoryFiles(id, configuration)
        var resolved = configuration
        resolved.path = files.path
        resolved.durability = .none
        let db = try files.withGate {
            try files.removeLeftover()
            do {
                return try ObjectStore.open(resolved, models: models)
            } catch {
                try? files.removeLeftover()  // this open made the files and no one else holds them
                throw error
            }
        }
        self.init(configuration: resolved, database: db, models: models, inMemory: files)
    }

    private static func open(_ configuration: Configuration, models: [String: ModelInfo]) throws -> Database {
        let path = configuration.path
        var options = DatabaseOptions(
            durability: configuration.durability, create: !configuration.readOnly,
            encryptionKey: configuration.encryptionKey)
        options.readOnly = configuration.readOnly
        options.verifyChecksums = configuration.verifyChecksums
        var db = try Database(path: path, options: options)
        if let ask = configuration.shouldCompactOnOpen, !configuration.readOnly {
            let st = try db.stats()
            if ask(st.fileSize, st.bytesInUse) { try? db.compact() }
        }
        do {
            try SchemaMigrator(db: db, configuration: configuration, models: models).openOrMigrate()
        } catch SchemaError.migrationRequired where configuration.deleteIfMigrationNeeded && !configuration.readOnly {
            db = try ObjectStore.recreate(path, configuration: configuration)
            try SchemaMigrator(db: db, configuration: configuration, models: models).openOrMigrate()
        }
        return db
    }

    private static func recreate(_ path: String, configuration: Configuration) throws -> Database {
        unlink(path)
        return try Database(
            path: path,
            options: DatabaseOptions(
                durability: configuration.durability, create: true, encryptionKey: configuration.encryptionKey))
    }

    func schema(_ tx: Transaction) throws -> StoredSchema {
        if let facts = VersionFacts.of(tx) { return facts.schema }
        let stamp = try SchemaStore.meta(tx, "schemaStamp") ?? 0
        if let c = schemaCache.withLock({ $0 }), c.stamp == stamp { return c.schema }
        let s = try SchemaStore.load(tx, path: configuration.path)
        schemaCache.withLock { $0 = (stamp, s) }
        return s
    }

    /// A context reading the newest version. Not Sendable: use it on one thread or actor.
    public func context() -> ObjectContext { ObjectContext(store: self) }

    /// The schema version stored in a file (nil when it holds no object schema yet), without
    /// opening it as a store: to pick the model classes that match it.
    public static func storedSchemaVersion(
        at path: String, encryptionKey: [UInt8]? = nil, verifyChecksums: Bool = false
    ) throws -> UInt64? {
        var options = DatabaseOptions(create: false, encryptionKey: encryptionKey)
        options.readOnly = true
        options.verifyChecksums = verifyChecksums
        let db = try Database(path: path, options: options)
        return try db.read { tx in
            let s = try SchemaStore.load(tx, path: path)
            return s.classes.isEmpty ? nil : s.version
        }
    }

    /// Checks the object graph of the newest version (links resolve, backlinks are the
    /// inverse of links, indexes match their rows, primary keys are unique, rows decode).
    public func check() throws -> ObjectCheckReport {
        try database.read { tx in
            try ObjectCheck.run(
                ObjectTables(
                    tx: tx, schema: try SchemaStore.load(tx, path: configuration.path), path: configuration.path))
        }
    }
}
