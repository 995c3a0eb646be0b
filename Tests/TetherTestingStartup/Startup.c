// Starts the test scheduler before the first test runs when TETHER_TEST_SCHEDULER=1, so that no
// job of the process ever runs outside it: a job that started before the scheduler would keep
// running on the global pool and could take a shared actor's work with it.
#include <stdlib.h>
#include <string.h>
#include "TetherTestingStartup.h"

__attribute__((constructor)) static void tether_testing_startup(void) {
    const char *flag = getenv("TETHER_TEST_SCHEDULER");
    if (flag != NULL && strcmp(flag, "1") == 0) {
        tether_testing_start_scheduler();
    }
}
