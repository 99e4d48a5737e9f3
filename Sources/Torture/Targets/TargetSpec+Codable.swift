/// A target travels (in a `ChildRequest`) as the text a user gives `--target`, which
/// `init(parsing:)` reads back: one spelling of a target, not a second schema.
extension TargetSpec: Codable {
    public init(from decoder: Decoder) throws {
        self = try TargetSpec(parsing: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
