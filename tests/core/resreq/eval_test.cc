// Evaluating select[] and order[] on a host (R-RR-1): free vs max, numbers vs strings,
// undefined names, defined(), tags, division by zero; and which expressions are static.
#include "core/resreq/eval.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/resreq/parser.h"

namespace sluice::core::resreq {
namespace {

// A host with 8 slots (3 free), mem 64000 (4000 free), gpu 2 (0 free), some attributes, tags.
class FakeHost : public HostView {
 public:
  std::map<std::string, std::string, std::less<>> attributes = {
      {"type", "linux"}, {"arch", "x86_64"}, {"model", "xeon-6248"}, {"cores", "16"},
      {"speed", "2.5"},  {"rack", "r07"},    {"empty", ""}};
  std::set<std::string, std::less<>> tags = {"fast", "ib"};
  std::map<std::string, double, std::less<>> free = {{"slots", 3}, {"mem", 4000}, {"gpu", 0}};
  std::map<std::string, double, std::less<>> total = {{"slots", 8}, {"mem", 64000}, {"gpu", 2}};

  std::optional<std::string_view> Attribute(std::string_view name) const override {
    auto it = attributes.find(name);
    if (it == attributes.end()) return std::nullopt;
    return std::string_view(it->second);
  }
  bool HasTag(std::string_view name) const override { return tags.find(name) != tags.end(); }
  std::optional<double> Free(std::string_view name) const override { return Find(free, name); }
  std::optional<double> Total(std::string_view name) const override { return Find(total, name); }

 private:
  static std::optional<double> Find(const std::map<std::string, double, std::less<>>& values,
                                    std::string_view name) {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
};

ExprId SelectOf(std::string_view expression, ExprPool& pool) {
  Result<Request> request = Parse("select[" + std::string(expression) + "]", pool);
  EXPECT_TRUE(request.has_value()) << expression << ": " << request.error().message();
  return request.has_value() ? request->alternatives[0].parts[0].select : kNoExpr;
}

struct Case {
  std::string_view name;
  std::string_view expression;
  bool want;
};

void ExpectSelects(const std::vector<Case>& cases, const HostView& host) {
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name) + ": " + std::string(c.expression));
    ExprPool pool;
    EXPECT_EQ(EvalSelect(SelectOf(c.expression, pool), pool, host), c.want);
  }
}

TEST(ResreqEvalTest, NoSelectIsTrue) {
  ExprPool pool;
  EXPECT_TRUE(EvalSelect(kNoExpr, pool, FakeHost()));
}

TEST(ResreqEvalTest, ConsumablesMeanFreeAndMaxMeansTotal) {
  ExpectSelects(
      {
          {"free mem", "mem>=4000", true},
          {"free mem is not total", "mem>4000", false},
          {"total mem", "maxmem==64000", true},
          {"free slots", "slots==3", true},
          {"total slots", "maxslots==8", true},
          {"custom consumable", "gpu==0 && maxgpu==2", true},
          {"used amount by arithmetic", "maxmem-mem==60000", true},
          {"max of a non-resource is a name", "maxfoo==1", false},
          {"spec example", "type==linux && mem>3000", true},
      },
      FakeHost());
}

TEST(ResreqEvalTest, NumbersCompareNumericallyElseAsStrings) {
  ExpectSelects(
      {
          {"numeric attribute", "cores>=16 && cores<17", true},
          {"numeric attribute is not a string", "cores>9", true},  // "16" < "9" as strings
          {"decimal attribute", "speed*2==5", true},
          {"quoted number stays a string", "cores==\"16\"", true},
          {"quoted number orders as a string", "cores>\"9\"", false},
          {"word", "type==linux", true},
          {"word differs", "type==windows", false},
          {"word not equal", "type!=windows", true},
          {"word with digits", "arch==x86_64", true},
          {"word naming a resource", "type!=gpu && !(type==gpu)", true},
          {"word naming an attribute", "type!=arch", true},
          {"resource compared as number", "maxgpu==2", true},
          {"quoted string", "model==\"xeon-6248\"", true},
          {"string order", "rack<r10 && rack>r00", true},
          {"string against number", "type==5", false},
          {"string against number differs", "type!=5", true},
          {"empty attribute", "empty==\"\"", true},
          {"literal comparison", "2>1", true},
          {"literal strings", "'a'<'b'", true},
      },
      FakeHost());
}

TEST(ResreqEvalTest, UndefinedNamesMakeComparisonsFalse) {
  ExpectSelects(
      {
          {"missing resource", "licx>0", false},
          {"missing resource, other operator", "licx<=0", false},
          {"missing resource, not equal", "licx!=0", false},
          {"negated", "!(licx>0)", true},
          {"missing attribute against word", "os==linux", false},
          {"missing attribute, not equal", "os!=linux", false},
          {"two words", "linux==linux", false},
          {"word against literal", "linux==\"linux\"", false},
          {"missing in arithmetic", "licx+1>0", false},
          {"string in arithmetic", "type+1>0", false},
          {"word in arithmetic", "foo*2>0", false},
      },
      FakeHost());
}

TEST(ResreqEvalTest, DivisionByZeroIsFalseNeverACrash) {
  ExpectSelects(
      {
          {"literal zero", "mem/0>1", false},
          {"literal zero, not equal", "mem/0!=1", false},
          {"zero resource", "mem/gpu>0", false},
          {"negated", "!(mem/gpu>0)", true},
          {"zero dividend is fine", "gpu/mem==0", true},
      },
      FakeHost());
  const std::string overflow = "1" + std::string(308, '0') + "*10>0";  // 1e309: not finite
  const std::string negated = "!(" + overflow + ")";
  ExpectSelects({{"overflow is undefined", overflow, false}, {"its negation holds", negated, true}},
                FakeHost());
}

TEST(ResreqEvalTest, TagsAndBareNames) {
  ExpectSelects(
      {
          {"tag", "fast", true},
          {"missing tag", "slow", false},
          {"negated missing tag", "!slow", true},
          {"tags combined", "fast && ib", true},
          {"non-zero resource", "mem", true},
          {"zero resource", "gpu", false},
          {"total", "maxgpu", true},
          {"numeric attribute", "cores", true},
          {"string attribute is not a tag", "type", false},
      },
      FakeHost());
}

TEST(ResreqEvalTest, DefinedCoversResourcesAttributesAndTags) {
  ExpectSelects(
      {
          {"resource", "defined(mem)", true},
          {"zero resource", "defined(gpu)", true},
          {"total", "defined(maxgpu)", true},
          {"attribute", "defined(type)", true},
          {"empty attribute", "defined(empty)", true},
          {"tag", "defined(fast)", true},
          {"missing", "defined(licx)", false},
          {"guard", "!defined(licx) || licx>0", true},
      },
      FakeHost());
}

TEST(ResreqEvalTest, LogicShortCircuits) {
  ExpectSelects(
      {
          {"and", "fast && mem>1 && slots>=3", true},
          {"and fails", "fast && mem>100000", false},
          {"or", "slow || ib", true},
          {"or fails", "slow || gpu>0", false},
          {"precedence", "slow && ib || fast", true},
          {"grouped", "slow && (ib || fast)", false},
      },
      FakeHost());
}

TEST(ResreqEvalTest, OrderKeysReadNumbers) {
  const FakeHost host;
  EXPECT_EQ(EvalOrderKey({"slots", true}, host), 3);
  EXPECT_EQ(EvalOrderKey({"mem", false}, host), 4000);  // the sign is the caller's
  EXPECT_EQ(EvalOrderKey({"maxmem", false}, host), 64000);
  EXPECT_EQ(EvalOrderKey({"cores", false}, host), 16);
  EXPECT_EQ(EvalOrderKey({"type", false}, host), std::nullopt);
  EXPECT_EQ(EvalOrderKey({"licx", false}, host), std::nullopt);
}

TEST(ResreqEvalTest, ReferencedNamesAreSortedAndUnique) {
  ExprPool pool;
  const ExprId id = SelectOf("type==linux && mem>maxmem/2 || defined(gpu) || fast || mem>1", pool);
  EXPECT_EQ(ReferencedNames(id, pool),
            (std::vector<std::string_view>{"fast", "gpu", "linux", "maxmem", "mem", "type"}));
  EXPECT_TRUE(ReferencedNames(kNoExpr, pool).empty());
}

TEST(ResreqEvalTest, StaticExpressionsReadNoFreeAmounts) {
  const std::set<std::string, std::less<>> consumables = {"mem", "gpu"};
  const auto is_consumable = [&](std::string_view name) {
    return consumables.find(name) != consumables.end();
  };
  struct StaticCase {
    std::string_view expression;
    bool reads_free;
  };
  const StaticCase cases[] = {
      {"type==linux && arch==x86_64", false},
      {"maxmem>1000 && maxslots>=8", false},
      {"fast && defined(model)", false},
      {"mem>1000", true},
      {"slots>1", true},
      {"defined(gpu)", true},
      {"gpu", true},
  };
  for (const StaticCase& c : cases) {
    SCOPED_TRACE(c.expression);
    ExprPool pool;
    EXPECT_EQ(ReadsFreeAmounts(SelectOf(c.expression, pool), pool, is_consumable), c.reads_free);
  }
  ExprPool pool;
  EXPECT_FALSE(ReadsFreeAmounts(kNoExpr, pool, is_consumable));
}

// EvalSelect's read_free is exact per host: when it stays false, the verdict is the same
// whatever the host's free amounts (so PassesSelect may memoize it); `type==gpu` against a
// text `type` reads the word, not the free gpus, while against a numeric attribute it does.
TEST(ResreqEvalTest, ReadFreeTellsWhetherTheVerdictDependsOnFreeAmounts) {
  struct ReadFreeCase {
    std::string_view expression;
    bool read_free;
  };
  const ReadFreeCase cases[] = {
      {"type==linux && arch==x86_64", false},
      {"type==gpu", false},
      {"type!=gpu", false},
      {"gpu==type", false},
      {"cores==gpu", true},  // numeric attribute: compared with the free gpus
      {"maxmem>1000 && maxslots>=8", false},
      {"defined(gpu) && defined(mem)", false},
      {"fast || mem>1", false},  // decided by the tag before mem is read
      {"!fast && mem>1", false},
      {"mem>1000", true},
      {"type==linux && mem>1000", true},
      {"slots>1", true},
      {"gpu", true},
      {"mem/(slots-slots)>0", true},  // undefined, but only because of the free amounts
      {"-mem<0", true},
      {"nosuch==gpu", true},  // an undefined name against the free gpus: compared as text
  };
  FakeHost busy;
  FakeHost idle;
  idle.free = {{"slots", 8}, {"mem", 64000}, {"gpu", 2}};
  for (const ReadFreeCase& c : cases) {
    SCOPED_TRACE(c.expression);
    ExprPool pool;
    const ExprId id = SelectOf(c.expression, pool);
    bool read_free = false;
    const bool verdict = EvalSelect(id, pool, busy, read_free);
    EXPECT_EQ(read_free, c.read_free);
    EXPECT_EQ(verdict, EvalSelect(id, pool, busy));
    if (!read_free) {
      EXPECT_EQ(EvalSelect(id, pool, idle), verdict);
    }
  }
}

}  // namespace
}  // namespace sluice::core::resreq
