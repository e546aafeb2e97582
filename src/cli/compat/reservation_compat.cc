// LSF's brsvadd, brsvs and brsvdel, and scontrol's reservation forms (R-COMPAT-1, R-RSV-1):
// the options are read by client/compat/lsf_rsv.h and slurm_rsv.h into `sluice rsv`'s, and
// sent to /v1/reservations as `sluice rsv` sends them (client/rsv_request.h).
//   brsvadd ...              `Reservation "NAME" is created` (NAME: -N's, else USER_N)
//   brsvs                    the reservations (client/compat/lsf_rsv.h FormatBrsvs)
//   brsvdel NAME...          `Reservation NAME is being deleted` per name
//   scontrol create reservation KEY=VALUE...   `Reservation created: NAME`
//   scontrol update ReservationName=NAME KEY=VALUE...   `Reservation updated.`
//   scontrol delete ReservationName=NAME       nothing on success
//   scontrol show reservation[s] [NAME]        Slurm's text, `No reservations in the system`
// LSF's commands exit 255 on an error, scontrol 1.
#include <iostream>

#include "cli/compat/compat_commands.h"
#include "cli/compat/job_lookup.h"
#include "cli/local_zone.h"
#include "cli/rest_verbs.h"
#include "client/compat/lsf_rsv.h"
#include "client/compat/slurm_rsv.h"
#include "client/printable.h"
#include "client/rsv_request.h"

namespace sluice::cli::compat {
namespace {

using nlohmann::json;

// Posts `flags` as a new reservation, named NextRsvName(prefix) when it has no name; the name.
Result<std::string> Create(client::RestClient& rest, client::RsvFlags flags,
                           const std::string& prefix) {
  if (flags.name.empty()) {
    Result<json> list = rest.Get("/v1/reservations");
    if (!list) return list.error();
    flags.name = client::compat::NextRsvName(*list, prefix);
  }
  Result<json> body = client::BuildRsvBody(flags, client::RsvBody::kAdd, Now());
  if (!body) return body.error();
  Result<json> created = rest.Post("/v1/reservations", *body);
  if (!created) return created.error();
  return flags.name;
}

int ScontrolError(const std::string& what, const Status& status) {
  std::cerr << what << ": " << status.message() << "\n";
  return 1;
}

// The value of ReservationName= (or Reservation=) among `words`.
std::string NameOf(Args words) {
  for (const std::string& word : words) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos) continue;
    std::string key = word.substr(0, eq);
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (key == "reservationname" || key == "reservation") return word.substr(eq + 1);
  }
  return "";
}

int ScontrolShow(client::RestClient& rest, Args words) {
  if (words.size() > 2) {  // show reservation NAME
    Result<json> rsv = rest.Get("/v1/reservations/" + verbs::QueryEscape(words[2]));
    if (!rsv) {
      std::cerr << "Reservation " << client::PrintableField(words[2]) << " not found\n";
      return 1;
    }
    std::cout << client::compat::ScontrolShowReservation(*rsv, Now());
    return 0;
  }
  Result<json> list = rest.Get("/v1/reservations");
  if (!list) return ScontrolError("slurm_load_reservations error", list.error());
  const json items = list->is_object() ? list->value("reservations", json::array()) : *list;
  if (!items.is_array() || items.empty()) {
    std::cout << "No reservations in the system\n";
    return 0;
  }
  for (const json& rsv : items) std::cout << client::compat::ScontrolShowReservation(rsv, Now());
  return 0;
}

int ScontrolChange(client::RestClient& rest, const std::string& verb, Args words) {
  Result<client::RsvFlags> flags =
      client::compat::ParseScontrolReservation(words, Now(), LocalZoneName());
  if (!flags) return ScontrolError("scontrol: error", flags.error());
  const std::string prefix =
      flags->users ? flags->users->substr(0, flags->users->find(',')) : "root";
  if (verb == "create") {
    Result<std::string> name = Create(rest, *flags, prefix);
    if (!name) return ScontrolError("Error creating the reservation", name.error());
    std::cout << "Reservation created: " << client::PrintableField(*name) << "\n";
    return 0;
  }
  const std::string name = flags->name;
  if (name.empty())
    return ScontrolError("scontrol: error", InvalidArgument("ReservationName= is required"));
  Result<json> body = client::BuildRsvBody(*flags, client::RsvBody::kModify, Now());
  if (!body) return ScontrolError("Error updating the reservation", body.error());
  Result<json> changed = rest.Patch("/v1/reservations/" + verbs::QueryEscape(name), *body);
  if (!changed) return ScontrolError("Error updating the reservation", changed.error());
  std::cout << "Reservation updated.\n";
  return 0;
}

}  // namespace

int ScontrolReservation(Args words) {
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return ScontrolError("scontrol: error", rest.error());
  const std::string verb = words[0];
  if (verb == "show") return ScontrolShow(**rest, words);
  if (verb == "create") return ScontrolChange(**rest, verb, words.subspan(2));
  if (verb == "update") return ScontrolChange(**rest, verb, words.subspan(1));
  const std::string name = NameOf(words.subspan(1));
  if (name.empty()) {
    return ScontrolError("scontrol: error", InvalidArgument("ReservationName= is required"));
  }
  Result<json> deleted = (*rest)->Delete("/v1/reservations/" + verbs::QueryEscape(name));
  if (!deleted) return ScontrolError("Error deleting the reservation", deleted.error());
  return 0;
}

int Brsvadd(Args args) {
  Result<client::compat::BrsvaddRequest> request =
      client::compat::ParseBrsvaddArgs(args, Now(), LocalZoneName());
  if (!request) return LsfUsage("brsvadd", request.error().message());
  for (const std::string& warning : request->warnings) std::cerr << "brsvadd: " << warning << "\n";
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return LsfUsage("brsvadd", rest.error().message());
  const client::RsvFlags& f = request->flags;
  const std::string prefix = f.users   ? f.users->substr(0, f.users->find(','))
                             : f.maint ? "system"
                                       : CurrentUser();
  Result<std::string> name = Create(**rest, f, prefix);
  if (!name) return LsfUsage("brsvadd", name.error().message());
  std::cout << "Reservation \"" << client::PrintableField(*name) << "\" is created\n";
  return 0;
}

int Brsvs(Args args) {
  if (!args.empty()) return LsfUsage("brsvs", std::string(args[0]) + ": not supported by Sluice");
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return LsfUsage("brsvs", rest.error().message());
  Result<json> list = (*rest)->Get("/v1/reservations");
  if (!list) return LsfUsage("brsvs", list.error().message());
  std::cout << client::PrintableText(client::compat::FormatBrsvs(*list, Now()));
  return 0;
}

int Brsvdel(Args args) {
  if (args.empty()) return LsfUsage("brsvdel", "a reservation name is required");
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return LsfUsage("brsvdel", rest.error().message());
  int code = 0;
  for (const std::string& name : args) {
    Result<json> deleted = (*rest)->Delete("/v1/reservations/" + verbs::QueryEscape(name));
    if (!deleted) {
      std::cerr << "Reservation " << client::PrintableField(name) << ": "
                << deleted.error().message() << "\n";
      code = kLsfFailure;
      continue;
    }
    std::cout << "Reservation " << client::PrintableField(name) << " is being deleted\n";
  }
  return code;
}

}  // namespace sluice::cli::compat
