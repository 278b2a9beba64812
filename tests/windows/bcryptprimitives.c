/*
 * A stand-in for the one function of bcryptprimitives.dll that Rust's standard
 * library (1.78 and later) imports, ProcessPrng, which Wine 8.0 lacks: without
 * it every Rust DLL or program fails to load under Wine (error 126). Windows
 * 10/11 have the real one. Test harness only: it is put on the DLL path of the
 * Windows tests under Wine, never in the FMU or anything shipped.
 */
#include <windows.h>

/* advapi32's RtlGenRandom, the generator Rust used before ProcessPrng. */
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
