/// How a direct message is sent again when no acknowledgement comes: the MeshCore apps' policy
/// (the Python client's `send_msg_with_retry`). With the defaults a message goes direct, direct,
/// then the path is reset and it floods; to a contact with no path it floods twice.
public struct MessageRetryPolicy: Sendable, Hashable {
    /// Sends in all, at least 1.
    public var maxAttempts: Int
    /// Unanswered direct sends after which the path is reset and the message floods; nil never
    /// floods on purpose.
    public var floodAfter: Int?
    /// Flooded sends at most, at least 1.
    public var maxFloodAttempts: Int

    /// Creates a policy.
    public init(maxAttempts: Int = 3, floodAfter: Int? = 2, maxFloodAttempts: Int = 2) {
        self.maxAttempts = maxAttempts
        self.floodAfter = floodAfter
        self.maxFloodAttempts = maxFloodAttempts
    }

    /// The apps' defaults: three sends, flooding after two unanswered direct ones.
    public static let apps = MessageRetryPolicy()
}
