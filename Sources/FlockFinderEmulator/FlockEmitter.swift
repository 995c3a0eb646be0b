import Foundation
import FlockFinder
import TetherCore
import TetherSimulator

/// Something in the world the detector can hear: a WiFi access point, a phone or camera
/// sending probe requests, or a BLE advertiser.
///
/// Its ``path`` says how far from the detector it is over time, so a scenario can drive past a
/// camera (in range, closest, out of range again) in virtual time. Times on the path count
/// from the moment the emitter is added to a ``FlockFinderEmulator``.
public struct FlockEmitter: Sendable, Hashable, Identifiable {
    /// What the emitter transmits.
    public enum Kind: Sendable, Hashable {
        /// An access point sending beacons with this SSID on one 2.4 GHz channel (1…13).
        case wifiAccessPoint(ssid: String, channel: Int)
        /// A station sending probe requests for this SSID on one channel (1…13).
        case wifiProbe(ssid: String, channel: Int)
        /// A BLE advertiser with this local name (may be empty) and advertised service UUIDs.
        case bleDevice(name: String, serviceUUIDs: [BluetoothUUID])
    }

    /// A point of the emitter's path: its distance from the detector at a time.
    public struct Waypoint: Sendable, Hashable {
        /// Time since the emitter was added.
        public var at: Duration
        /// Distance from the detector in metres; ``FlockEmitter/outOfRange`` means unheard.
        public var distance: Double

        /// Creates a waypoint.
        public init(at: Duration, distance: Double) {
            self.at = at
            self.distance = distance
        }
    }

    /// A distance that is never heard (for example "parked behind a hill").
    public static let outOfRange = Double.infinity

    /// The MAC address in lower case (also the identity the firmware de-duplicates on).
    public var id: String
    /// What it transmits.
    public var kind: Kind
    /// The MAC address, lower case `aa:bb:cc:dd:ee:ff`.
    public var mac: String
    /// Distance over time; between waypoints the distance is interpolated linearly, before the
    /// first and after the last it holds. An empty path is never heard.
    public var path: [Waypoint]

    /// Creates an emitter; `mac` is stored in lower case.
    public init(mac: String, kind: Kind, path: [Waypoint]) {
        let mac = mac.lowercased()
        self.id = mac
        self.mac = mac
        self.kind = kind
        self.path = path.sorted { $0.at < $1.at }
    }

    /// Creates an emitter that stays at `distance` metres.
    public init(mac: String, kind: Kind, distance: Double) {
        self.init(mac: mac, kind: kind, path: [Waypoint(at: .zero, distance: distance)])
    }

    /// The distance at `time` since the emitter was added.
    public func distance(at time: Duration) -> Double {
        guard let first = path.first else { return Self.outOfRange }
        guard time > first.at else { return first.distance }
        for (from, to) in zip(path, path.dropFirst()) where time < to.at {
            // An out-of-range endpoint cannot be interpolated: hold the earlier value until the
            // next waypoint, as a car reappearing round a corner does.
            guard from.distance.isFinite, to.distance.isFinite, to.at > from.at else { return from.distance }
            let fraction = (time - from.at).seconds / (to.at - from.at).seconds
            return from.distance + (to.distance - from.distance) * fraction
        }
        return path[path.count - 1].distance
    }

    /// True for WiFi emitters.
    public var isWiFi: Bool {
        if case .bleDevice = kind { return false }
        return true
    }

    /// The WiFi channel, nil for BLE.
    public var channel: Int? {
        switch kind {
        case .wifiAccessPoint(_, let channel), .wifiProbe(_, let channel): channel
        case .bleDevice: nil
        }
    }

    // MARK: Paths

    /// The path of a straight drive past the detector: closest (`closest` metres) at `passAt`,
    /// at `speed` m/s, sampled every half second while within `range` metres, and out of range
    /// before and after.
    public static func driveBy(
        closest: Double = 8,
        at passAt: Duration = .seconds(10),
        speed: Double = 13.4,
        range: Double = 120
    ) -> [Waypoint] {
        let speed = max(0.1, speed), closest = max(0, closest)
        let reach = (max(range, closest + 1) * max(range, closest + 1) - closest * closest).squareRoot() / speed
        let step = 0.5
        let samples = Int((reach / step).rounded(.up))
        var path: [Waypoint] = []
        for index in -samples...samples {
            let offset = Double(index) * step
            let at = passAt + .milliseconds(Int64((offset * 1000).rounded()))
            guard at >= .zero else { continue }
            let along = speed * offset
            path.append(Waypoint(at: at, distance: (closest * closest + along * along).squareRoot()))
        }
        return path
    }

    /// A path that stays at `distance` metres.
    public static func fixed(_ distance: Double) -> [Waypoint] {
        [Waypoint(at: .zero, distance: distance)]
    }

    // MARK: Scenario emitters

    /// A Flock Safety ALPR camera's access point: a Flock WiFi OUI and a `Flock-…` SSID.
    public static func flockCamera(
        mac: String = "70:c9:4e:3a:21:07",
        ssid: String = "Flock-3A2107",
        channel: Int = 6,
        path: [Waypoint] = fixed(20)
    ) -> FlockEmitter {
        FlockEmitter(mac: mac, kind: .wifiAccessPoint(ssid: ssid, channel: channel), path: path)
    }

    /// A Penguin camera's access point (matched by SSID; the default MAC has no known OUI).
    public static func penguin(
        mac: String = "02:1a:11:40:55:01",
        ssid: String = "Penguin-5501",
        channel: Int = 11,
        path: [Waypoint] = fixed(20)
    ) -> FlockEmitter {
        FlockEmitter(mac: mac, kind: .wifiAccessPoint(ssid: ssid, channel: channel), path: path)
    }

    /// A Pigvision camera's access point (matched by SSID).
    public static func pigvision(
        mac: String = "02:1a:11:77:90:02",
        ssid: String = "Pigvision-9002",
        channel: Int = 1,
        path: [Waypoint] = fixed(20)
    ) -> FlockEmitter {
        FlockEmitter(mac: mac, kind: .wifiAccessPoint(ssid: ssid, channel: channel), path: path)
    }

    /// A Flock "FS Ext Battery" pack advertising over BLE with an FS Ext Battery OUI.
    public static func fsExtBattery(
        mac: String = "58:8e:81:a0:b1:c2",
        name: String = "FS Ext Battery",
        path: [Waypoint] = fixed(15)
    ) -> FlockEmitter {
        FlockEmitter(mac: mac, kind: .bleDevice(name: name, serviceUUIDs: []), path: path)
    }

    /// A Raven gunshot detector: a BLE device advertising Raven service UUIDs.
    public static func raven(
        mac: String = "12:34:56:ab:cd:ef",
        name: String = "",
        serviceUUIDs: [BluetoothUUID] = [BluetoothUUID(UInt16(0x180A)), BluetoothUUID(UInt16(0x3100)), BluetoothUUID(UInt16(0x3200))],
        path: [Waypoint] = fixed(25)
    ) -> FlockEmitter {
        FlockEmitter(mac: mac, kind: .bleDevice(name: name, serviceUUIDs: serviceUUIDs), path: path)
    }

    /// A consumer camera that reveals its brand in its BLE name (for example "Ring Doorbell Pro").
    public static func brandedCamera(
        name: String,
        mac: String = "a4:83:e7:ab:cd:ef",
        path: [Waypoint] = fixed(10)
    ) -> FlockEmitter {
        FlockEmitter(mac: mac, kind: .bleDevice(name: name, serviceUUIDs: []), path: path)
    }

    /// A home router: nothing the firmware looks for.
    public static func ordinaryAccessPoint(
        mac: String = "a4:2b:b0:11:22:33",
        ssid: String = "HomeNetwork-2G",
        channel: Int = 6,
        path: [Waypoint] = fixed(15)
    ) -> FlockEmitter {
        FlockEmitter(mac: mac, kind: .wifiAccessPoint(ssid: ssid, channel: channel), path: path)
    }

    /// Earbuds advertising the Battery service: nothing the firmware looks for.
    public static func ordinaryBLE(
        mac: String = "f4:f5:d8:01:02:03",
        name: String = "Pixel Buds",
        serviceUUIDs: [BluetoothUUID] = [BluetoothUUID(UInt16(0x180F))],
        path: [Waypoint] = fixed(5)
    ) -> FlockEmitter {
        FlockEmitter(mac: mac, kind: .bleDevice(name: name, serviceUUIDs: serviceUUIDs), path: path)
    }
}
