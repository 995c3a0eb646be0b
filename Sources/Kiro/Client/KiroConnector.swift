import Foundation
import TetherCore

/// Finds and connects to a Kiro with the timeouts and retry policy of §2.3 and §8.3.
public enum KiroConnector {
    /// The connection configuration of §2.3: 15 s to connect; the first connection and every
    /// reconnection retried with the connect retry policy of §8.3 (1, 2, 4 s).
    public static var configuration: ConnectionConfiguration {
        DeviceProfile.kiro.connectionConfiguration(
            connectionTimeout: KiroBLEConstants.connectionTimeout,
            reconnectPolicy: ReconnectPolicy(schedule: .delays(KiroBLEConstants.connectRetryDelays)),
            firstConnectionRetry: ReconnectPolicy(schedule: .delays(KiroBLEConstants.connectRetryDelays)))
    }

    /// Scans for the Kiro service (10 s per scan, retried after 2, 4 and 8 s).
    public static func find(on central: Central, clock: any Clock<Duration> = ContinuousClock()) async throws -> DiscoveredPeripheral {
        var delays = KiroBLEConstants.scanRetryDelays[...]
        while true {
            do {
                return try await central.discover(filter: DeviceProfile.kiro.scanFilter, timeout: KiroBLEConstants.scanTimeout)
            } catch BLEError.scanTimeout {
                guard let delay = delays.popFirst() else { throw BLEError.deviceNotFound }
                try await clock.sleep(for: delay)
            }
        }
    }

    /// Connects to `peripheral`; the connection retries the first attempt per §8.3 (after 1, 2
    /// and 4 s, ``configuration``'s `firstConnectionRetry`) before it throws.
    public static func connect(to peripheral: PeripheralID, on central: Central) async throws -> ConnectionStateMachine {
        let connection = await central.connection(to: peripheral, configuration: configuration)
        try await connection.connect()
        return connection
    }
}
