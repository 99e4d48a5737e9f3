extension Database {
    /// The file format this engine writes and opens, for results that must say which
    /// format they measured.
    public static var formatVersion: Int { Int(Layout.formatVersion) }
}
