/// A result whose JSON is what the run recorded (`Recorded`, synthesised `Codable`) with keys
/// derived from it written beside, for readers that do not recompute them (`passed`,
/// `verdict`, ...). Reading ignores the derived keys. The recorded fields read and write as
/// the result's own (`result.cycles`).
@dynamicMemberLookup
public protocol WritesDerivedKeys: Codable {
    associatedtype Recorded: Codable
    associatedtype DerivedKeys: CodingKey
    var recorded: Recorded { get set }
    init(recorded: Recorded)
    func encodeDerived(into c: inout KeyedEncodingContainer<DerivedKeys>) throws
}

extension WritesDerivedKeys {
    public init(from decoder: Decoder) throws {
        self.init(recorded: try Recorded(from: decoder))
    }

    public func encode(to encoder: Encoder) throws {
        try recorded.encode(to: encoder)
        var derived = encoder.container(keyedBy: DerivedKeys.self)
        try encodeDerived(into: &derived)
    }

    public subscript<T>(dynamicMember field: WritableKeyPath<Recorded, T>) -> T {
        get { recorded[keyPath: field] }
        set { recorded[keyPath: field] = newValue }
    }
}
