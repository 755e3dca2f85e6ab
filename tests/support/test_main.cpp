// main() of every weft unit test: GoogleTest plus a per-test hang watchdog (armed before the
// fixture is built and disarmed after it is destroyed, so a hang in weft_finalize is caught too),
// which names the hung test instead of leaving only ctest's timeout.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "weft_test.h"

namespace {

class hang_listener : public ::testing::EmptyTestEventListener {
 public:
  void OnTestStart(const ::testing::TestInfo& info) override {
    dog_ = std::make_unique<weft_test::watchdog>(std::string(info.test_suite_name()) + "." + info.name(),
                                                 weft_test::default_hang_seconds());
  }
  void OnTestEnd(const ::testing::TestInfo&) override { dog_.reset(); }

 private:
  std::unique_ptr<weft_test::watchdog> dog_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new hang_listener);
  return RUN_ALL_TESTS();
}
