/// The CoreBluetooth driver.
public enum TetherCoreBluetoothModule {}
