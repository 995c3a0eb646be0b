import Dispatch

extension DispatchTimeInterval {
    /// A Swift `Duration` as a dispatch interval (nanosecond precision, clamped).
    public init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = nanoseconds.overflow ? Int64.max : nanoseconds.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
        self = .nanoseconds(Int(clamping: max(0, total)))
    }
}
