import FaultFS

/// The suite and FaultFS draw from the same generator, so one printed seed drives both.
public typealias SeededRandom = FaultFS.SeededRandom
