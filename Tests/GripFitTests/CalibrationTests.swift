import GripFit
import Testing

@Suite struct CalibrationTests {
    @Test(arguments: [Int32(0), 1, -1, 834_572, -8_388_608, 8_388_607])
    func rawCalibrationIsTheIdentity(raw: Int32) {
        #expect(RawCalibration().force(fromRaw: raw) == Double(raw))
    }

    @Test func linearWithPositiveOffset() {
        let calibration = LinearCalibration(slope: 0.5, zeroOffset: 100)
        #expect(calibration.force(fromRaw: 100) == 0)
        #expect(calibration.force(fromRaw: 300) == 100)
        #expect(calibration.force(fromRaw: 0) == -50)
    }

    @Test func linearWithNegativeOffset() {
        let calibration = LinearCalibration(slope: 2, zeroOffset: -1_000)
        #expect(calibration.force(fromRaw: -1_000) == 0)
        #expect(calibration.force(fromRaw: 0) == 2_000)
        #expect(calibration.force(fromRaw: -1_500) == -1_000)
    }

    @Test func linearWithZeroOffsetIsAScale() {
        let calibration = LinearCalibration(slope: 0.25, zeroOffset: 0)
        #expect(calibration.force(fromRaw: 0) == 0)
        #expect(calibration.force(fromRaw: 400) == 100)
        #expect(calibration.force(fromRaw: -400) == -100)
    }

    // The subtraction happens in Double, so the 24-bit extremes cannot overflow.
    @Test func linearAtTheRangeExtremes() {
        let calibration = LinearCalibration(slope: 1, zeroOffset: 8_388_607)
        #expect(calibration.force(fromRaw: -8_388_608) == -16_777_215)
        let inverted = LinearCalibration(slope: -1, zeroOffset: -8_388_608)
        #expect(inverted.force(fromRaw: 8_388_607) == -16_777_215)
    }

    @Test func calibrationsAreInterchangeable() {
        let calibrations: [any GripCalibration] = [RawCalibration(), LinearCalibration(slope: 3, zeroOffset: 10)]
        #expect(calibrations.map { $0.force(fromRaw: 20) } == [20, 30])
    }
}
