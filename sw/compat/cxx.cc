/* cxx.cc - a C++ program in the prototype's style (its MICA and chain-replication servers
   are C++): a table template configured by a struct of static constexpr members, a global
   object built by a constructor that __libc_init_array runs (main calls it after
   sbrk_init, as the prototype's lnic-multi-core-mica.cc does), objects made with new and
   destroyed with delete through a base class with virtual functions, placement new, and
   the <c...> headers' names in namespace std (sw/cxx). Exits 0 when every check holds,
   else the number of the first that failed; prints "cxx: ok". */
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

extern "C" {
extern int _end;
void sbrk_init(long int* start);
void __libc_init_array();
void printstr(const char* s);
}

struct SmallConfig {
    static constexpr std::size_t kSlots = 8;
    static constexpr std::size_t kValueBytes = 16;
};

template <class Config>
class Table {
  public:
    void set(std::size_t slot, const char* value) { std::memcpy(values_[slot % Config::kSlots], value, Config::kValueBytes); }
    bool holds(std::size_t slot, const char* value) const {
        return std::memcmp(values_[slot % Config::kSlots], value, Config::kValueBytes) == 0;
    }

  private:
    char values_[Config::kSlots][Config::kValueBytes] = {};
};

struct Shape {
    virtual ~Shape() {}
    virtual std::uint64_t area() const = 0;
};

struct Rect : Shape {
    Rect(std::uint64_t w, std::uint64_t h) : w_(w), h_(h) {}
    std::uint64_t area() const override { return w_ * h_; }
    std::uint64_t w_, h_;
};

/* Built before main's checks by __libc_init_array (a static constructor). */
struct Started {
    Started() : magic(0x5eed) {}
    std::uint64_t magic;
};
static Started started;

static int check_table() {
    static Table<SmallConfig> table;
    const char value[SmallConfig::kValueBytes] = "sixteen bytes..";
    table.set(11, value);
    return table.holds(3, value) && !table.holds(4, value) ? 0 : 2;
}

static int check_heap() {
    Shape* s = new Rect(6, 7);
    std::uint64_t a = s->area();
    delete s;
    std::uint64_t* words = new std::uint64_t[100];
    for (int i = 0; i < 100; i++) words[i] = static_cast<std::uint64_t>(i);
    std::uint64_t last = words[99];
    delete[] words;
    return a == 42 && last == 99 ? 0 : 3;
}

static int check_placement() {
    alignas(Rect) unsigned char space[sizeof(Rect)];
    Rect* r = new (space) Rect(3, 5);
    std::uint64_t a = r->area();
    r->~Rect();
    return a == 15 && static_cast<void*>(r) == static_cast<void*>(space) ? 0 : 4;
}

int main() {
    // The heap starts 1 MiB above _end, past eight harts' 128 KiB stacks (crt.S).
    std::uintptr_t heap = reinterpret_cast<std::uintptr_t>(&_end) + (1u << 20);
    sbrk_init(reinterpret_cast<long int*>(heap));
    __libc_init_array();
    int bad = started.magic == 0x5eed ? 0 : 1;
    if (!bad) bad = check_table();
    if (!bad) bad = check_heap();
    if (!bad) bad = check_placement();
    printstr(bad ? "cxx: a check failed\n" : "cxx: ok\n");
    return bad;
}
