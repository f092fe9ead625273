// What a freestanding C++ program needs from a C++ runtime, on picolibc and a bare-metal
// runtime such as the nanoPU prototype's (sw/cxx/README.md): the replaceable allocation
// operators on malloc/free, the heap behind malloc (sbrk, started by sbrk_init as the
// prototype's C++ programs do), and the ABI hooks GCC's code calls. Symbols that a runtime
// may define itself (__dso_handle, in the prototype's syscalls.c) are weak here.
#include <cstdlib>
#include <new>

extern "C" {

// Console output: both the prototype's runtime and ours (sw/compat/syscalls.c) define
// printstr; picolibc's stdio would need a FILE the runtimes do not give.
void printstr(const char* s);

// The heap grows up from the address sbrk_init gives. Without it there is no heap (we do
// not know where the runtime put its stacks): sbrk fails, malloc returns NULL, and
// operator new says so.
static char* heap_top;

void sbrk_init(long int* start) { heap_top = reinterpret_cast<char*>(start); }

void* sbrk(ptrdiff_t increment) {
    if (heap_top == nullptr) return reinterpret_cast<void*>(-1);
    char* old = heap_top;
    heap_top += increment;
    return old;
}

// Static constructors and destructors, run by __libc_init_array / __libc_fini_array as
// newlib does on RISC-V, which the prototype's toolchain used: the preinit and init arrays
// only. Debian's picolibc also calls `_init()` from __libc_init_array, and the prototype's
// runtime names its per-hart entry `_init(cid, nc)`: picolibc's version would enter the
// runtime a second time with garbage arguments. The arrays' bounds come from the linker
// script; a script without them (the prototype's link.ld) leaves them undefined (weak, 0)
// and no constructor runs, as with that script on the prototype.
typedef void (*init_fn)();
#define ARRAY_BOUND(name) extern init_fn name[] __attribute__((weak, visibility("hidden")))
ARRAY_BOUND(__preinit_array_start);
ARRAY_BOUND(__preinit_array_end);
ARRAY_BOUND(__init_array_start);
ARRAY_BOUND(__init_array_end);
ARRAY_BOUND(__fini_array_start);
ARRAY_BOUND(__fini_array_end);

static void run_forward(init_fn* begin, init_fn* end) {
    for (init_fn* f = begin; f < end; f++) (*f)();
}

void __libc_init_array() {
    run_forward(__preinit_array_start, __preinit_array_end);
    run_forward(__init_array_start, __init_array_end);
}

void __libc_fini_array() {
    for (init_fn* f = __fini_array_end; f > __fini_array_start; f--) f[-1]();
}

// Static objects' destructors: a bare-metal program ends by writing `tohost`, and nothing
// runs them (as on the prototype); registering one succeeds and does nothing.
__attribute__((weak)) void* __dso_handle = nullptr;
int __cxa_atexit(void (*)(void*), void*, void*) { return 0; }

// A pure virtual function called through a half-built or destroyed object.
void __cxa_pure_virtual() {
    printstr("C++: pure virtual function called\n");
    exit(134);
}

}  // extern "C"

namespace std {
const nothrow_t nothrow{};
}

// Built with -fno-exceptions: no std::bad_alloc to throw, so running out of memory stops
// the program with a message and exit code 134 (what abort's SIGABRT gives on a host).
static void* allocate(std::size_t size) {
    void* p = malloc(size ? size : 1);
    if (p == nullptr) {
        printstr("C++: operator new failed: out of heap (was sbrk_init called?)\n");
        exit(134);
    }
    return p;
}

void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return malloc(size ? size : 1); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return malloc(size ? size : 1); }
void operator delete(void* p) noexcept { free(p); }
void operator delete[](void* p) noexcept { free(p); }
void operator delete(void* p, std::size_t) noexcept { free(p); }
void operator delete[](void* p, std::size_t) noexcept { free(p); }
