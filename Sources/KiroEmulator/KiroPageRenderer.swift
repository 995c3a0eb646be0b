import Foundation
import Kiro

/// Draws the device's pages as the E-ink panel would show them: fixed-width text for a
/// terminal, and SVG for a browser.
public struct KiroPageRenderer: Sendable {
    /// What the panel shows besides the page itself.
    public struct Status: Sendable {
        /// Device time, as the device last synced it.
        public var unixTime: UInt32
        /// Battery percentage.
        public var batteryLevel: UInt8
        /// Operating mode.
        public var mode: DeviceMode
        /// Creates a status line.
        public init(unixTime: UInt32, batteryLevel: UInt8, mode: DeviceMode) {
            self.unixTime = unixTime
            self.batteryLevel = batteryLevel
            self.mode = mode
        }
    }

    /// Characters per line of the panel.
    public let width: Int

    /// Creates a renderer for a panel `width` characters wide.
    public init(width: Int = 40) {
        self.width = max(24, width)
    }

    /// The page's lines (without the frame).
    public func lines(_ page: KiroEmulator.Page, day: DayPack?, task: TaskInPage?, selected: Int, status: Status) -> [String] {
        var lines: [String] = []
        let time = Self.clock(status.unixTime)
        lines.append(pad(time, right: "\(status.mode == .focus ? "FOCUS " : "")\(status.batteryLevel)%"))
        lines.append(String(repeating: "─", count: width))
        guard let day else {
            lines += ["", center("Waiting for today's data…"), ""]
            return lines
        }
        switch page {
        case .startOfDay:
            lines += wrap(day.morningGreeting) + [""] + wrap(day.dailySummary) + [""] + wrap("First: " + day.firstItem)
        case .overview:
            lines += wrap(day.currentScheduleSummary) + [""]
            for (index, task) in day.topTasks.enumerated() {
                let mark = task.isCompleted ? "[x]" : "[ ]"
                let pointer = index == selected ? "›" : " "
                lines += wrap("\(pointer)\(mark) \(task.title) \(String(repeating: "!", count: max(0, min(3, 4 - task.priority))))")
            }
            if day.topTasks.isEmpty { lines.append("No tasks today") }
            lines += [""] + wrap(day.companionPhrase)
        case .taskIn:
            guard let task else {
                lines.append("No task selected")
                break
            }
            lines += wrap(task.taskTitle) + [""] + wrap(task.taskDescription) + [""]
            lines.append("⏱ \(task.estimatedDuration)" + (task.focusChallengeActive ? "   ⚑ focus challenge" : ""))
            lines += [""] + wrap(task.encouragement)
        case .settlement:
            let s = day.settlement
            lines.append("Done \(s.tasksCompleted)/\(s.tasksTotal)   +\(s.pointsEarned) pts   🔥\(s.streakDays)")
            lines += [""] + wrap(s.summaryMessage) + [""] + wrap(s.encouragementMessage)
        }
        return lines
    }

    /// The page framed as a fixed-width box, for a terminal.
    public func text(_ page: KiroEmulator.Page, day: DayPack?, task: TaskInPage?, selected: Int, status: Status) -> String {
        let body = lines(page, day: day, task: task, selected: selected, status: status)
        let title = " \(Self.title(page)) "
        let top = "┌" + title + String(repeating: "─", count: max(0, width + 2 - title.count)) + "┐"
        let rows = body.map { "│ " + $0 + String(repeating: " ", count: max(0, width - $0.count)) + " │" }
        let bottom = "└" + String(repeating: "─", count: width + 2) + "┘"
        return ([top] + rows + [bottom]).joined(separator: "\n")
    }

    /// The page as an SVG image (black on white, like the panel).
    public func svg(_ page: KiroEmulator.Page, day: DayPack?, task: TaskInPage?, selected: Int, status: Status) -> String {
        let body = lines(page, day: day, task: task, selected: selected, status: status)
        let lineHeight = 20
        let height = (body.count + 2) * lineHeight
        let pixelWidth = width * 10 + 20
        var svg = ##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(pixelWidth)" height="\##(height)" viewBox="0 0 \##(pixelWidth) \##(height)">"##
        svg += ##"<rect width="100%" height="100%" fill="#f4f1ea" stroke="#111" stroke-width="2"/>"##
        svg += ##"<text x="10" y="\##(lineHeight)" font-family="monospace" font-size="14" font-weight="bold" fill="#111">\##(Self.escape(Self.title(page)))</text>"##
        for (index, line) in body.enumerated() {
            svg += ##"<text x="10" y="\##((index + 2) * lineHeight)" font-family="monospace" font-size="14" fill="#111">\##(Self.escape(line))</text>"##
        }
        return svg + "</svg>"
    }

    /// A page's title as the panel heads it (`1 · Start of day`).
    public static func title(_ page: KiroEmulator.Page) -> String {
        switch page {
        case .startOfDay: "1 · Start of day"
        case .overview: "2 · Overview"
        case .taskIn: "3 · Task in"
        case .settlement: "4 · Settlement"
        }
    }

    static func clock(_ unixTime: UInt32) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE d MMM  HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(unixTime)))
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    private func pad(_ left: String, right: String) -> String {
        left + String(repeating: " ", count: max(1, width - left.count - right.count)) + right
    }

    private func center(_ text: String) -> String {
        String(repeating: " ", count: max(0, (width - text.count) / 2)) + text
    }

    /// Word-wraps to the panel width, breaking words longer than a line.
    func wrap(_ text: String) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true).map(String.init) {
            var word = word
            while word.count > width {
                if !current.isEmpty { lines.append(current); current = "" }
                lines.append(String(word.prefix(width)))
                word = String(word.dropFirst(width))
            }
            if current.isEmpty {
                current = word
            } else if current.count + 1 + word.count <= width {
                current += " " + word
            } else {
                lines.append(current)
                current = word
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines.isEmpty ? [""] : lines
    }
}

extension KiroEmulator {
    /// The panel's current status line data.
    public var status: KiroPageRenderer.Status {
        KiroPageRenderer.Status(unixTime: unixTime, batteryLevel: batteryLevel, mode: mode)
    }

    /// A page as fixed-width text (the current page by default).
    public func renderText(_ page: Page? = nil, width: Int = 40) -> String {
        KiroPageRenderer(width: width).text(page ?? self.page, day: dayPack, task: taskInPage, selected: selectedIndex, status: status)
    }

    /// A page as SVG (the current page by default).
    public func renderSVG(_ page: Page? = nil, width: Int = 40) -> String {
        KiroPageRenderer(width: width).svg(page ?? self.page, day: dayPack, task: taskInPage, selected: selectedIndex, status: status)
    }
}
