// Signatures in the shape of CUDA kernels, for cudart.kernels._demangle against c++filt.
// tests/test_demangle.py compiles this with g++ and compares every defined symbol.
#include <cstddef>

struct Pair { int a; double b; };
enum Color { red, green };
enum class Mode : short { fast = 1 };
template <typename T> struct Vec { T x; };
template <typename A, typename B> struct Two { A a; B b; };

void f0() {}
void f1(int) {}
void f2(char, signed char, unsigned char, short, unsigned short) {}
void f3(unsigned int, long, unsigned long, long long, unsigned long long) {}
void f4(float, double, long double, bool, wchar_t) {}
void f5(char16_t, char32_t, __int128, unsigned __int128) {}
void f6(float *, const float *, volatile int *, const volatile double *) {}
void f7(float **, const float *const *, float *const, int &, const int &, int &&) {}
void f8(Pair, Pair *, const Pair &, Color, Mode) {}
void f9(float *__restrict__ a, const float *__restrict__ b) {}
void f10(Vec<int>, Vec<float> *, Vec<Vec<int>>, Two<int, Vec<char>>) {}
void f11(decltype(nullptr)) {}
void f12(int, ...) {}
void f13(const char *, const char *, char *, char *) {}
void f14(Pair *, Pair *, Pair, const Pair *, const Pair *) {}
void f15(std::size_t, std::ptrdiff_t) {}

namespace ns {
void g0(int *, int) {}
struct Pair { int z; };
void g1(::Pair *, ns::Pair *) {}
namespace inner {
void h0(const ns::Pair &, Vec<ns::Pair>) {}
struct Q {};
void h1(Q, Q *, const Q &, Vec<Q>) {}
}  // namespace inner
template <typename T> void fill(T *, T, int) {}
template void fill<int>(int *, int, int);
template void fill<float>(float *, float, int);
template void fill<const char *>(const char **, const char *, int);
template void fill<Vec<int>>(Vec<int> *, Vec<int>, int);
}  // namespace ns

namespace {
void anon(int *) {}
}
void use_anon() { anon(nullptr); }

template <int N> void times(int *) {}
template void times<2>(int *);
template void times<-3>(int *);
template <unsigned N> void utimes(int *) {}
template void utimes<7u>(int *);
template <long N> void ltimes(float *) {}
template void ltimes<5>(float *);
template <unsigned long N> void ultimes(float *) {}
template void ultimes<9>(float *);
template <long long N> void lltimes(float *) {}
template void lltimes<4>(float *);
template <unsigned long long N> void ulltimes(float *) {}
template void ulltimes<4>(float *);
template <bool B> void flag(int) {}
template void flag<true>(int);
template void flag<false>(int);
template <char C> void chr(int) {}
template void chr<'A'>(int);
template <short S> void shrt(int) {}
template void shrt<-2>(int);
template <Color C> void col(int) {}
template void col<green>(int);
template <typename T, int N> void tile(const T *, T *, int) {}
template void tile<float, 16>(const float *, float *, int);
template void tile<double, 32>(const double *, double *, int);
template <typename T, typename U> T convert(U) { return T(); }
template int convert<int, float>(float);
template Vec<float> convert<Vec<float>, const Vec<int> &>(const Vec<int> &);
template <typename T> void ref(T &, const T &, T &&) {}
template void ref<int>(int &, const int &, int &&);
template void ref<Pair>(Pair &, const Pair &, Pair &&);
template <typename... Ts> void pack(Ts...) {}
template void pack<int, float>(int, float);
template void pack<>();
template <typename T> void ptrs(T *, T **, const T *, T *const *) {}
template void ptrs<int>(int *, int **, const int *, int *const *);
template void ptrs<Pair>(Pair *, Pair **, const Pair *, Pair *const *);
template <typename T> void vol(volatile T *, const volatile T *) {}
template void vol<unsigned>(volatile unsigned *, const volatile unsigned *);

namespace std2 {
template <typename T> struct box {};
template <typename T> void put(box<T>, T *) {}
template void put<int>(box<int>, int *);
}  // namespace std2

// Outside the subset: the demangler answers None for these.
struct S { void member(int); static void st(int); };
void S::member(int) {}
void S::st(int) {}
void fnptr(void (*)(int)) {}
void arr(int (*)[4]) {}
