import FlockFinder
import Foundation
import GripFit
import Kiro
import TetherCore
import Tybe

let gripFitLines = FuzzTarget(name: "gripfit_lines", seeds: {
    ["R:8388607\n", "R:-8388608\r\n", "S:READY\nS:NOT_READY\nS:PONG\n", "S:RATE:10\n", "D:GRIPFIT,1.2.0\n", "R:12a\n"].map { chunked(Data($0.utf8)) }
}, run: { data in
    let parser = BLEMessageParser()
    var framer = NewlineFramer(maxLineLength: 256)
    for chunk in chunks(of: data) {
        for line in framer.pushLines(chunk) { _ = try? parser.decode(line) }
    }
    _ = GripFitCommand(line: String(decoding: data, as: UTF8.self))
})

let kiroEvents = FuzzTarget(name: "kiro_events", seeds: {
    let events = [
        KiroEvent(type: .completeTask, id: "task-1", timestamp: 1_767_225_600),
        KiroEvent(type: .enterTaskIn, id: "a", timestamp: 1),
        KiroEvent(type: .wheelSelect, id: "7"),
    ]
    return events.map { $0.encoded(form: .innerLength) } + events.map { $0.encoded(form: .legacy) }
}, run: { data in
    let decoder = KiroEventDecoder()
    _ = try? decoder.decode(data)
    _ = decoder.decodeAll(data)
})

let kiroPackets = FuzzTarget(name: "kiro_packets", seeds: {
    [Data([0x12, 0x00, 0x01, 0x01]), Data([0x05, 0x00, 0x04, 0x65, 0x8F, 0x2A, 0x00]),
     Data([0x02, 0x00, 0x05]) + Data("[{}]\n".utf8)].map { chunked($0, size: 2) }
}, run: { data in
    var plain = KiroPacketAssembler(checksum: false, maxPacketLength: 512)
    var checked = KiroPacketAssembler(checksum: true, maxPacketLength: 512)
    var at = Duration.zero
    for chunk in chunks(of: data) {
        at += .milliseconds(10)
        _ = plain.push(chunk, at: at)
        _ = checked.push(chunk, at: at)
        invariant(plain.bufferedByteCount <= 512 + 5 && checked.bufferedByteCount <= 512 + 5, "assembler holds \(plain.bufferedByteCount)/\(checked.bufferedByteCount) bytes")
    }
    _ = try? KiroCommand.decode(packet: data)
    _ = try? KiroCommand.decode(packet: data, checksum: true)
})

let tybeStatusConfig = FuzzTarget(name: "tybe_status_config", seeds: {
    [Data([0x07, 0x05, 0x00]), Data([0x01, 0x00, 0x05]), Data([0x01, 0x02, 0x03, 0x00, 0xE7, 0xE7, 0xE7, 0xE7, 0xE7, 0x28]), Data([0x40])]
}, run: { data in
    _ = TybeStatus(data)
    _ = TybeConfig(data)
    _ = TybeConfig.parseChannelWrite(data)
})

let tybeFrames = FuzzTarget(name: "tybe_frames", seeds: {
    [TybeFrame(seq: 1, opcodes: Data([0x01, 0x04, 0x00])).bytes, TybeFrame(seq: 255, opcodes: Data([0x01, 0x04, 0x02, 0x02, 0x01, 0x00])).bytes, Data([0x00, 0xFE])]
}, run: { data in
    if let frame = try? TybeFrame(decoding: data) {
        _ = TybeOpcode.decode(frame.opcodes)
    }
    _ = TybeOpcode.decode(data)
})

let terminalKeys = FuzzTarget(name: "terminal_keys", seeds: {
    ["abc\u{1B}[A\u{1B}[1;5D\u{1B}OP\u{1B}[15~", "\u{1B}[200~paste\u{1B}[201~", "\u{1B}\u{1B}[Z한글\u{7F}\r"].map { chunked(Data($0.utf8), size: 2) }
}, run: { data in
    var decoder = TerminalKeyDecoder()
    for chunk in chunks(of: data) { _ = decoder.push(chunk) }
    _ = decoder.flush()
})

let flockFinderJSON = FuzzTarget(name: "flockfinder_json", seeds: {
    [#"{"event":"detection","detection_method":"probe_request","protocol":"wifi","mac_address":"b4:1e:52:aa:bb:cc","rssi":-61,"frequency":2437,"ssid":"Flock-1234","device_type":"FLOCK","timestamp":12345,"threat_score":95}"#,
     #"{"event":"heartbeat","uptime":12}"#, #"{"mac":"00:00:00:00:00:00","rssi":"x"}"#, "not json"].map { Data($0.utf8) }
}, run: { data in
    let parser = FlockMessageParser()
    _ = parser.decode(data)
    _ = try? parser.decodeDetection(data)
    _ = try? parser.decodeStream(data)
    _ = FlockCommand(data: data)
})
