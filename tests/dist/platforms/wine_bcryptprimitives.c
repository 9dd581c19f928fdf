/* A stand-in for Windows' bcryptprimitives.dll, for the tests under Wine 8 only: never shipped.
 *
 * Rust's standard library for Windows (1.78 and later) draws its random numbers from
 * ProcessPrng in bcryptprimitives.dll, which Windows 10 and later have and Wine 8 lacks, so
 * that Wine refuses to start any program or DLL built with it. The tests put this file beside
 * the programs they run (tests/dist/platforms.sh builds it with mingw-w64 into the test's own
 * directory): its one function answers from RtlGenRandom (advapi32's SystemFunction036), the
 * system random number generator that Wine does have. The files in dist/ are the ones Windows
 * users get, unchanged.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
