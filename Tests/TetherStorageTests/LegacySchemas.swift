/// What earlier versions of the stores wrote, to open as users' files would be found.
enum LegacySchemas {
    /// GripFit's first schema (`startedAt` as date text), with `migration` recorded as done.
    static func gripFitV1(recordedAs migration: String) -> String {
        """
        CREATE TABLE gripSession (id TEXT PRIMARY KEY, startedAt DATETIME NOT NULL, duration DOUBLE NOT NULL,
          maxForce DOUBLE NOT NULL, averageForce DOUBLE NOT NULL, sampleCount INTEGER NOT NULL);
        CREATE TABLE gripSample (sessionId TEXT NOT NULL REFERENCES gripSession(id) ON DELETE CASCADE,
          offset DOUBLE NOT NULL, raw INTEGER NOT NULL, force DOUBLE NOT NULL);
        CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
        INSERT INTO grdb_migrations VALUES ('\(migration)');
        """
    }

    /// FlockFinder's first schema (`receivedAt` counted from 2001), recorded as `flockfinder.v1`.
    static let flockFinderV1 = """
        CREATE TABLE flockDetection (id INTEGER PRIMARY KEY AUTOINCREMENT, receivedAt DOUBLE NOT NULL,
          type TEXT NOT NULL, rssi INTEGER NOT NULL, confidence DOUBLE NOT NULL, mac TEXT, ssid TEXT,
          deviceUptimeMs INTEGER, latitude DOUBLE, longitude DOUBLE, horizontalAccuracy DOUBLE);
        CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
        INSERT INTO grdb_migrations VALUES ('flockfinder.v1');
        """
}
