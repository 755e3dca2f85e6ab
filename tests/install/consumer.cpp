// Uses weft as an installed package would: the C++ API over the shared or the static library.
#include <weft/weft.hpp>

#include <cstdio>

int main() {
  int x = 0;
  weft::spawn([&] { x = 6; }, weft::out(x));
  weft::spawn([&] { x *= 7; }, weft::inout(x));
  weft::taskwait();
  std::printf("x = %d\n", x);
  weft_finalize();
  return x == 42 ? 0 : 1;
}
