import Foundation

/// Tasks an object starts and must cancel when it goes away: the view models keep their
/// stream-following tasks here, so their `deinit` (which may run on any thread) cancels them
/// even when nobody called `stop()`.
package final class TaskBag: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var tasks: [Task<Void, Never>] = []

    package init() {}

    /// Whether no task is held.
    package var isEmpty: Bool { lock.withLock { tasks.isEmpty } }

    /// Holds `task` until ``cancelAll()``.
    package func add(_ task: Task<Void, Never>) { lock.withLock { tasks.append(task) } }

    /// Cancels and forgets every task.
    package func cancelAll() {
        let all = lock.withLock { () -> [Task<Void, Never>] in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in all { task.cancel() }
    }

    deinit { for task in tasks { task.cancel() } }
}
