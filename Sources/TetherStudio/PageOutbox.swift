#if os(macOS) || os(Linux)

/// What waits to be sent to one page: messages in order, at most `capacity` of them, where a
/// device screen's state takes one place however often it changes (a state is a snapshot:
/// only the newest matters). So a page that reads slowly gets fewer screen updates, not a
/// growing queue, and one that does not read at all fills with the other messages and is
/// dropped.
struct PageOutbox {
    private enum Entry {
        case message(String)
        /// The device whose newest state is in `screens`.
        case screen(String)
    }

    let capacity: Int
    private var entries: [Entry] = []
    private var head = 0
    private var screens: [String: String] = [:]
    /// The page's writer, waiting for the next message.
    var waiter: CheckedContinuation<String?, Never>?

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Entries waiting.
    var count: Int { entries.count - head }

    /// Adds a message; false when the outbox is full (the page is too slow).
    mutating func add(_ text: String) -> Bool {
        if let waiter {
            self.waiter = nil
            waiter.resume(returning: text)
            return true
        }
        guard count < capacity else { return false }
        entries.append(.message(text))
        return true
    }

    /// Adds `device`'s newest state, replacing one still waiting; false when full.
    mutating func addScreen(_ device: String, _ text: String) -> Bool {
        if let waiter {
            self.waiter = nil
            waiter.resume(returning: text)
            return true
        }
        if screens[device] != nil {
            screens[device] = text
            return true
        }
        guard count < capacity else { return false }
        screens[device] = text
        entries.append(.screen(device))
        return true
    }

    /// The next message, if one waits.
    mutating func take() -> String? {
        while head < entries.count {
            let entry = entries[head]
            head += 1
            if head > 64, head * 2 > entries.count {
                entries.removeFirst(head)
                head = 0
            }
            switch entry {
            case .message(let text): return text
            case .screen(let device): if let text = screens.removeValue(forKey: device) { return text }
            }
        }
        return nil
    }

    /// Ends the outbox: a waiting writer is told there is nothing more.
    mutating func close() {
        waiter?.resume(returning: nil)
        waiter = nil
        entries.removeAll()
        screens.removeAll()
        head = 0
    }
}
#endif
