#include "sim/lublin_generator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "base/check.h"

namespace sluice::sim {
namespace {

// Batch-job parameters of Lublin & Feitelson, JPDC 63(11) 2003, with the values published in
// the authors' generator (lublin99). Gamma(shape, scale) has mean shape * scale.
constexpr double kSerialProb = 0.2927;  // P(size = 1)
constexpr double kPow2Prob = 0.6686;    // P(parallel job with a power-of-two size)
constexpr double kULow = 1.2;           // log2 of the smallest parallel size (favours 2)
constexpr double kUMedBelowUHi = 2.0;   // UMed = UHi - 2 (UMed 5, UHi 7 in the fit)
constexpr double kUProb = 0.875;        // P(first stage of the two-stage uniform)
constexpr double kRunShape1 = 6.57;     // ln(runtime), first gamma (short jobs)
constexpr double kRunScale1 = 0.823;
constexpr double kRunShape2 = 639.1;  // ln(runtime), second gamma (long jobs)
constexpr double kRunScale2 = 0.0156;
constexpr double kMixSlope = -0.003;  // p = kMixSlope * size + kMixIntercept
constexpr double kMixIntercept = 0.6986;
constexpr double kMaxLogRuntime = 12.0;        // runtimes above e^12 s are redrawn
constexpr double kGapShape = 6.0415 * 1.0519;  // AARR * ARAR: busy-hour gaps -> all-day gaps
constexpr double kGapScale = 0.8531;
constexpr double kMaxLogGap = 13.0;     // inter-arrival gaps above e^13 s are redrawn
constexpr double kCycleShape = 6.1271;  // arrivals per half-hour bucket over the day
constexpr double kCycleScale = 5.2740;
constexpr int kCycleFirstPoint = 11;  // the fitted day spans gamma points 11..58

constexpr int kBuckets = 48;
constexpr double kBucketSeconds = 1800;
constexpr double kDaySeconds = kBuckets * kBucketSeconds;

constexpr int64_t kMaxUsers = 100;
constexpr std::array<int64_t, 12> kRoundLimits = {60,   300,   600,   900,   1800,  3600,
                                                  7200, 14400, 28800, 43200, 86400, 172800};

// Uniform, normal and gamma variates computed from the raw 64-bit output of mt19937_64, so
// the stream is the same with every standard library.
class Sampler {
 public:
  explicit Sampler(uint64_t seed) : engine_(seed) {}

  // [0, 1) with 53 random bits.
  double Uniform01() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // (0, 1), safe for log().
  double OpenUniform01() { return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53; }
  double Uniform(double low, double high) { return low + (high - low) * Uniform01(); }

  // Marsaglia's polar method; the second variate of each pair is dropped.
  double StandardNormal() {
    while (true) {
      const double u = 2 * Uniform01() - 1;
      const double v = 2 * Uniform01() - 1;
      const double s = u * u + v * v;
      if (s > 0 && s < 1) return u * std::sqrt(-2 * std::log(s) / s);
    }
  }

  // Marsaglia & Tsang, "A simple method for generating gamma variables", ACM TOMS 26(3),
  // 2000; shape < 1 uses Gamma(shape + 1) * U^(1 / shape).
  double Gamma(double shape, double scale) {
    if (shape < 1) {
      const double boost = std::pow(OpenUniform01(), 1 / shape);
      return Gamma(shape + 1, scale) * boost;
    }
    const double d = shape - 1.0 / 3;
    const double c = 1 / std::sqrt(9 * d);
    while (true) {
      const double x = StandardNormal();
      double v = 1 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      const double u = OpenUniform01();
      if (u < 1 - 0.0331 * x * x * x * x) return d * v * scale;
      if (std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) return d * v * scale;
    }
  }

 private:
  std::mt19937_64 engine_;
};

// The two-stage uniform on log2(size), adapted to the machine size.
struct SizeModel {
  double low = 0;
  double med = 0;
  double high = 0;

  explicit SizeModel(int32_t procs) {
    high = std::log2(static_cast<double>(procs));
    low = std::min(kULow, high);
    med = std::clamp(high - kUMedBelowUHi, low, high);
  }
};

int32_t DrawSize(Sampler& rng, const SizeModel& model, int32_t procs) {
  const double u = rng.Uniform01();
  if (u < kSerialProb) return 1;
  double log_size = rng.Uniform01() < kUProb ? rng.Uniform(model.low, model.med)
                                             : rng.Uniform(model.med, model.high);
  if (u < kSerialProb + kPow2Prob) {
    log_size = std::floor(log_size + 0.5);
    if (log_size > model.high) log_size = std::floor(model.high);
  }
  const double size = std::floor(std::exp2(log_size) + 0.5);
  return static_cast<int32_t>(std::clamp(size, 1.0, static_cast<double>(procs)));
}

int64_t DrawRuntime(Sampler& rng, int32_t size) {
  const double p = std::clamp(kMixSlope * size + kMixIntercept, 0.0, 1.0);
  double log_runtime = 0;
  do {
    log_runtime =
        rng.Uniform01() < p ? rng.Gamma(kRunShape1, kRunScale1) : rng.Gamma(kRunShape2, kRunScale2);
  } while (log_runtime > kMaxLogRuntime);
  return std::max<int64_t>(1, static_cast<int64_t>(std::exp(log_runtime)));
}

// A nominal ("busy-hour") inter-arrival gap in seconds.
double DrawGap(Sampler& rng) {
  double log_gap = 0;
  do {
    log_gap = rng.Gamma(kGapShape, kGapScale);
  } while (log_gap > kMaxLogGap);
  return std::exp(log_gap);
}

int64_t RoundLimit(int64_t runtime) {
  for (int64_t limit : kRoundLimits) {
    if (runtime <= limit) return limit;
  }
  const int64_t day = 86400;
  return (runtime + day - 1) / day * day;
}

// The daily cycle as a time warp. Bucket b (b * 30 min after midnight) has weight w[b], the
// mass of Gamma(kCycleShape, kCycleScale) on [j - 0.5, j + 0.5] for the point j in
// [11, 59) with (j - 1) mod 48 = b, normalized so that the mean weight is 1. Nominal time
// flows at rate w[b] during bucket b, so a day holds exactly 86,400 nominal seconds:
//   Nominal(t) = integral over [0, t] of w(bucket(s)) ds,   Wall(n) = Nominal^-1(n).
class DailyCycle {
 public:
  DailyCycle() {
    double sum = 0;
    for (int b = 0; b < kBuckets; ++b) {
      const int j = b + 1 >= kCycleFirstPoint ? b + 1 : b + 1 + kBuckets;
      weights_[b] = GammaMass(j - 0.5, j + 0.5);
      sum += weights_[b];
    }
    for (double& w : weights_) w *= kBuckets / sum;
  }

  double Nominal(double wall) const {
    const double days = std::floor(wall / kDaySeconds);
    double rest = wall - days * kDaySeconds;
    double nominal = days * kDaySeconds;
    for (int b = 0; b < kBuckets && rest > 0; ++b) {
      const double in_bucket = std::min(rest, kBucketSeconds);
      nominal += in_bucket * weights_[b];
      rest -= in_bucket;
    }
    return nominal;
  }

  double Wall(double nominal) const {
    const double days = std::floor(nominal / kDaySeconds);
    double rest = nominal - days * kDaySeconds;
    double wall = days * kDaySeconds;
    for (int b = 0; b < kBuckets; ++b) {
      const double bucket_nominal = kBucketSeconds * weights_[b];
      if (rest <= bucket_nominal) return wall + rest / weights_[b];
      rest -= bucket_nominal;
      wall += kBucketSeconds;
    }
    return wall;  // rounding left a sliver past the last bucket
  }

 private:
  // Unnormalized gamma mass on [a, b] by Simpson's rule; the normalization constant cancels.
  static double GammaMass(double a, double b) {
    const auto density = [](double x) {
      return std::exp((kCycleShape - 1) * std::log(x) - x / kCycleScale);
    };
    constexpr int kSteps = 32;
    const double h = (b - a) / kSteps;
    double sum = density(a) + density(b);
    for (int i = 1; i < kSteps; ++i) sum += density(a + i * h) * (i % 2 == 1 ? 4 : 2);
    return sum * h / 3;
  }

  std::array<double, kBuckets> weights_{};
};

}  // namespace

Workload GenerateLublin(const LublinOptions& options) {
  SLUICE_CHECK(options.jobs >= 0);
  SLUICE_CHECK(options.procs >= 1);
  SLUICE_CHECK(options.load >= kMinLoad && options.load <= kMaxLoad);
  const size_t count = static_cast<size_t>(options.jobs);
  Sampler rng(options.seed);
  const SizeModel size_model(options.procs);
  const int64_t users =
      std::clamp<int64_t>(std::llround(std::sqrt(static_cast<double>(count))), 1, kMaxUsers);

  // 1. Draw each job's size, runtime and user, and its nominal arrival (cumulative gaps).
  Workload workload;
  workload.procs = options.procs;
  workload.jobs.resize(count);
  std::vector<double> nominal_arrival(count, 0.0);
  double work = 0;  // sum(runtime * size), processor-seconds
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) nominal_arrival[i] = nominal_arrival[i - 1] + DrawGap(rng);
    WorkloadJob& job = workload.jobs[i];
    const int32_t size = DrawSize(rng, size_model, options.procs);
    job.runtime = DrawRuntime(rng, size);
    const double u = rng.Uniform01();
    const int64_t user = std::min<int64_t>(users - 1, static_cast<int64_t>(users * u * u));
    job.spec.id = static_cast<JobId>(i + 1);
    job.spec.user = "u" + std::to_string(user + 1);
    job.spec.min_tasks = size;
    job.spec.max_tasks = size;
    job.spec.run_limit = RoundLimit(job.runtime);
    work += static_cast<double>(job.runtime) * size;
  }
  if (count < 2) return workload;

  // 2. Scale the nominal gaps by c so that the last arrival lands at the target span:
  //      span = work / (procs * load),   c = Nominal(span) / nominal_arrival[last].
  const DailyCycle cycle;
  const double span = work / (static_cast<double>(options.procs) * options.load);
  const double c = cycle.Nominal(span) / nominal_arrival.back();

  // 3. Map to wall time through the daily cycle, in whole seconds, never decreasing.
  Instant previous = 0;
  for (size_t i = 0; i < count; ++i) {
    const Instant submit = std::llround(cycle.Wall(c * nominal_arrival[i]));
    previous = std::max(previous, submit);
    workload.jobs[i].spec.submit_time = previous;
  }
  return workload;
}

}  // namespace sluice::sim
