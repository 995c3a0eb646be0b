/// A reproduction of the CoreBluetooth API backed by the simulator (Linux).
public enum CoreBluetoothLookalikeModule {}
