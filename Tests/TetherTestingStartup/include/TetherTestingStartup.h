#ifndef TETHER_TESTING_STARTUP_H
#define TETHER_TESTING_STARTUP_H

/// Starts the test scheduler (defined in TetherTesting); the startup constructor calls it when
/// TETHER_TEST_SCHEDULER=1.
void tether_testing_start_scheduler(void);

#endif
