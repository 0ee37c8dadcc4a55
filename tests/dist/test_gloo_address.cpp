// compat::gloo_address_towards: the address a rank advertises to the others is the one that
// routes towards MASTER_ADDR, never the loopback address the host name may resolve to.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tts/dist/c10d_compat.h"

namespace tts::dist {
namespace {

// This host's IPv4 addresses outside 127.0.0.0/8.
std::vector<std::string> non_loopback_addresses() {
  std::vector<std::string> found;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return found;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) continue;
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    found.push_back(text);
  }
  freeifaddrs(list);
  return found;
}

TEST(GlooAddress, LoopbackMasterMeansLoopback) {
  EXPECT_EQ(compat::gloo_address_towards("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(compat::gloo_address_towards("localhost"), "127.0.0.1");
}

TEST(GlooAddress, AMasterOnAnotherInterfaceOfThisHostIsReachedByThatAddress) {
  const auto addresses = non_loopback_addresses();
  if (addresses.empty()) GTEST_SKIP() << "this host has no IPv4 address outside 127.0.0.0/8";
  // As on rank 0's own host with MASTER_ADDR set to its network address: before, the host
  // name's address (often 127.0.1.1) was advertised.
  for (const auto& address : addresses) EXPECT_EQ(compat::gloo_address_towards(address), address);
}

TEST(GlooAddress, ARemoteMasterIsReachedByTheRoutesSourceOrNamesTheFix) {
  // 198.51.100.1 (TEST-NET-2, never assigned): connect() of a UDP socket sends nothing.
  try {
    const std::string address = compat::gloo_address_towards("198.51.100.1");
    const auto addresses = non_loopback_addresses();
    EXPECT_NE(address.rfind("127.", 0), 0u) << address << " is loopback";
    EXPECT_NE(std::find(addresses.begin(), addresses.end(), address), addresses.end()) << address;
  } catch (const std::runtime_error& e) {
    // No route at all (no default route on this host): the error says what to set.
    const std::string message = e.what();
    EXPECT_NE(message.find("MASTER_ADDR=198.51.100.1"), std::string::npos) << message;
    EXPECT_NE(message.find("GLOO_SOCKET_IFNAME"), std::string::npos) << message;
  }
}

TEST(GlooAddress, AnUnknownHostNameIsNamed) {
  try {
    compat::gloo_address_towards("no-such-host.invalid");
    ADD_FAILURE() << "an unknown host resolved";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("MASTER_ADDR=no-such-host.invalid"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tts::dist
