import Foundation
import Kiro
import Logging
import TetherCore
import TetherSimulator

/// The Kiro E-ink device as a virtual peripheral.
///
/// It reassembles and validates the app's packets (including packets split across writes),
/// keeps the four pages of §6, renders them as text and SVG, and has a scriptable user whose
/// wheel presses, wakes, sleeps and battery warnings become events stamped by the device clock.
/// When its data is stale it asks for a refresh.
@SimulationActor
public final class KiroEmulator: PeripheralBehavior {
    /// The four pages of §6.
    public enum Page: String, Sendable, CaseIterable {
        /// Page 1: start of day.
        case startOfDay
        /// Page 2: overview.
        case overview
        /// Page 3: task in.
        case taskIn
        /// Page 4: settlement.
        case settlement
    }

    /// Which event form the firmware emits (firmware-facts: inner-length by default).
    public var eventForm: KiroEventForm
    /// Expect a CRC-16 after each payload (off in v1.1 mode).
    public let checksum: Bool
    /// Data older than this makes the device ask for a refresh when it wakes.
    public var staleAfter: Duration

    /// The last DayPack received.
    public private(set) var dayPack: DayPack? { didSet { changed.send() } }
    /// The last TaskInPage received.
    public private(set) var taskInPage: TaskInPage? { didSet { changed.send() } }
    /// The last PetStatus received.
    public private(set) var petStatus: PetStatus? { didSet { changed.send() } }
    /// The last TaskList received.
    public private(set) var taskList: TaskList? { didSet { changed.send() } }
    /// The last Schedule received.
    public private(set) var schedule: Schedule? { didSet { changed.send() } }
    /// The last Weather received.
    public private(set) var weather: Weather? { didSet { changed.send() } }
    /// The operating mode.
    public private(set) var mode: DeviceMode = .interactive { didSet { changed.send() } }
    /// The page on screen.
    public private(set) var page: Page = .startOfDay { didSet { changed.send() } }
    /// The task the wheel points at (index into the DayPack's top tasks).
    public private(set) var selectedIndex = 0 { didSet { changed.send() } }
    /// Battery percentage.
    public private(set) var batteryLevel: UInt8 = 87 { didSet { changed.send() } }
    /// True while the device sleeps.
    public private(set) var isAsleep = false { didSet { changed.send() } }
    /// Every command accepted, in order.
    public private(set) var commandsReceived: [BLEDataType] = []
    /// Packets rejected (malformed, unknown type, bad checksum, timed out).
    public private(set) var rejectedPackets = 0
    /// Every event sent, in order.
    public private(set) var eventsSent: [KiroEvent] = []

    private var assembler: KiroPacketAssembler
    private var context: PeripheralContext?
    private var lastDataAt: Duration?
    /// Device clock: Unix seconds at `clockSetAt` of virtual time.
    private var clockBase: UInt32 { didSet { changed.send() } }
    private var clockSetAt: Duration = .zero
    private let changed = ChangeSignal()
    private let logger = Logger(label: "tether.kiro.emulator")

    /// Creates the firmware. `clock` is the device clock's Unix time before the first Time sync.
    public nonisolated init(eventForm: KiroEventForm = .innerLength, checksum: Bool = false,
                            staleAfter: Duration = .seconds(3600), unixTime: UInt32 = 1_769_763_600) {
        self.eventForm = eventForm
        self.checksum = checksum
        self.staleAfter = staleAfter
        self.clockBase = unixTime
        self.assembler = KiroPacketAssembler(checksum: checksum)
    }

    /// A virtual Kiro running this firmware.
    public nonisolated func makePeripheral(id: PeripheralID = PeripheralID(UUID()), distance: Double = 1.0) -> VirtualPeripheral {
        VirtualPeripheral(profile: .kiro, id: id, behavior: self, distance: distance)
    }

    /// The device clock in Unix seconds.
    public var unixTime: UInt32 {
        let elapsed = ((context?.now ?? clockSetAt) - clockSetAt).components.seconds
        return clockBase &+ UInt32(clamping: max(0, elapsed))
    }

    /// A signal for every change of what the panel shows: the data received, the page, the
    /// selection, the mode, the battery, sleep, and the clock being set (one for many when the
    /// observer is behind). The clock's minutes passing are not changes.
    public func changes() -> AsyncStream<Void> { changed.changes() }

    // MARK: The scripted user

    /// Turns the wheel to a task on the overview (SelectedTaskChanged).
    public func selectTask(at index: Int) {
        guard let tasks = dayPack?.topTasks, tasks.indices.contains(index) else { return }
        selectedIndex = index
        page = .overview
        emit(KiroEvent(type: .selectedTaskChanged, id: tasks[index].taskId, timestamp: nil, batteryLevel: nil))
    }

    /// Presses the wheel on the selected item (WheelSelect).
    public func pressWheel() {
        guard let task = selectedTask else { return }
        emit(KiroEvent(type: .wheelSelect, id: task.taskId, timestamp: nil, batteryLevel: nil))
    }

    /// Opens the selected task's detail page: a focus session starts (EnterTaskIn).
    public func enterTask() {
        guard let task = selectedTask else { return }
        page = .taskIn
        emit(KiroEvent(type: .enterTaskIn, id: task.taskId, timestamp: unixTime, batteryLevel: nil))
    }

    /// Short press on the task page: the task is done (CompleteTask).
    public func completeTask() {
        finishTask(.completeTask, completed: true)
    }

    /// Long press (> 1 s) on the task page: the task is skipped (SkipTask).
    public func skipTask() {
        finishTask(.skipTask, completed: false)
    }

    /// Opens a calendar event's detail (ViewEventDetail).
    public func viewEvent(_ eventId: String) {
        emit(KiroEvent(type: .viewEventDetail, id: eventId, timestamp: nil, batteryLevel: nil))
    }

    /// Shows a page without telling the app (pages 1, 2 and 4 are local navigation).
    public func show(_ page: Page) { self.page = page }

    /// Wakes the device (DeviceWake), asking for a refresh if its data is stale.
    public func wake() {
        isAsleep = false
        emit(KiroEvent(type: .deviceWake, id: nil, timestamp: nil, batteryLevel: nil))
        if isStale { requestRefresh() }
    }

    /// Puts the device to sleep (DeviceSleep).
    public func sleep() {
        isAsleep = true
        emit(KiroEvent(type: .deviceSleep, id: nil, timestamp: nil, batteryLevel: nil))
    }

    /// Drops the battery to `level` and warns the app (LowBattery).
    public func lowBattery(_ level: UInt8) {
        batteryLevel = min(level, 100)
        emit(KiroEvent(type: .lowBattery, id: nil, timestamp: nil, batteryLevel: batteryLevel))
    }

    /// Asks the app for fresh data (RequestRefresh).
    public func requestRefresh() {
        emit(KiroEvent(type: .requestRefresh, id: nil, timestamp: nil, batteryLevel: nil))
    }

    /// True when the device has no day, or its day is older than `staleAfter`.
    public var isStale: Bool {
        guard let lastDataAt, let now = context?.now else { return true }
        return now - lastDataAt > staleAfter
    }

    private var selectedTask: TopTask? {
        guard let tasks = dayPack?.topTasks, tasks.indices.contains(selectedIndex) else { return nil }
        return tasks[selectedIndex]
    }

    private func finishTask(_ type: EventLogType, completed: Bool) {
        guard page == .taskIn, let taskId = taskInPage?.taskId ?? selectedTask?.taskId else { return }
        if completed, var day = dayPack, let index = day.topTasks.firstIndex(where: { $0.taskId == taskId }) {
            day.topTasks[index].isCompleted = true
            dayPack = day
        }
        page = .overview
        emit(KiroEvent(type: type, id: taskId, timestamp: unixTime, batteryLevel: nil))
    }

    private func emit(_ event: KiroEvent) {
        eventsSent.append(event)
        guard let context else { return }
        if !context.notify(event.encoded(form: eventForm), on: KiroBLEConstants.notifyCharacteristic) {
            logger.warning("Event not delivered (not subscribed or queue full)", metadata: ["type": "\(event.type.rawValue)"])
        }
    }

    // MARK: PeripheralBehavior

    public func didConnect(_ context: PeripheralContext) {
        self.context = context
        assembler.reset()
    }

    public func didDisconnect(_ context: PeripheralContext) {
        assembler.reset()
    }

    public func didChangeSubscription(_ characteristic: CharacteristicPath, enabled: Bool, context: PeripheralContext) {
        self.context = context
    }

    public func didWrite(_ value: Data, to characteristic: CharacteristicPath, type: WriteType, context: PeripheralContext) -> ATTError? {
        guard characteristic == KiroBLEConstants.writeCharacteristic else { return .writeNotPermitted }
        self.context = context
        for result in assembler.push(value, at: context.now) {
            switch result {
            case .success(let command): apply(command, at: context.now)
            case .failure(let error):
                rejectedPackets += 1
                logger.error("Discarding a packet: \(error)")
            }
        }
        return nil
    }

    private func apply(_ command: KiroCommand, at now: Duration) {
        commandsReceived.append(command.type)
        switch command {
        case .dayPack(let day):
            dayPack = day
            mode = day.deviceMode
            lastDataAt = now
            selectedIndex = min(selectedIndex, max(0, day.topTasks.count - 1))
            if page == .taskIn { page = .overview }
        case .taskInPage(let detail):
            taskInPage = detail
            page = .taskIn
        case .time(let sync):
            if let date = Self.parse(sync.dateTime) {
                clockBase = UInt32(clamping: Int(date.timeIntervalSince1970))
                clockSetAt = now
            }
        case .deviceMode(let newMode):
            mode = newMode
        case .petStatus(let status):
            petStatus = status
        case .taskList(let list):
            taskList = list
        case .schedule(let events):
            schedule = events
        case .weather(let report):
            weather = report
        }
    }

    /// The device shows wall-clock time as sent (it has no time zone): read it as UTC.
    static func parse(_ dateTime: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return formatter.date(from: dateTime)
    }
}
