// EventStream<Message>: a server-streaming gRPC reactor (callback API) woken by change events
// instead of a thread polling per stream: the tracker's lease streams, the daemon's job watches.
//
// Contract: a subclass subscribes to its source's change events in its constructor, calling
// Pump() from the callback and once at the end of the constructor; it implements Next() (what to
// do now) and Cleanup() (unsubscribe; run once, from OnDone, before the reactor deletes itself).
// At most one write is in flight. A cancelled call or a failed write finishes the stream CANCELLED.
// gRPC may run a reaction (OnWriteDone, OnDone) inline inside StartWrite or Finish, so both are
// called with no lock held, and the reactor deletes itself only once OnDone has run and no Pump is
// between its decision and its gRPC call. Next() runs under the stream's lock (mu_), so a subclass
// marks the state its Next() keeps GUARDED_BY(mu_) and its override REQUIRES(mu_).
#ifndef TUNEFARM_SERVICE_EVENT_STREAM_H_
#define TUNEFARM_SERVICE_EVENT_STREAM_H_

#include <grpcpp/grpcpp.h>

#include "tunefarm/runtime/mutex.h"

namespace tunefarm::service {

template <class Message>
class EventStream : public grpc::ServerWriteReactor<Message> {
 public:
  enum class Step { kNothing, kWrite, kFinish };

  // Decides and acts; safe from any thread, any number of times.
  void Pump() EXCLUDES(mu_) {
    Step step = Step::kNothing;
    grpc::Status status;
    {
      MutexLock lock(&mu_);
      if (done_ || finished_ || writing_) return;
      ++active_;
      if (cancelled_) {
        step = Step::kFinish;
        status = grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
      } else {
        step = Next(&message_, &status);
      }
      writing_ = step == Step::kWrite;
      finished_ = step == Step::kFinish;
    }
    if (step == Step::kWrite) this->StartWrite(&message_);
    if (step == Step::kFinish) this->Finish(status);
    Release();
  }

  void OnWriteDone(bool ok) override EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      writing_ = false;
      cancelled_ = cancelled_ || !ok;
    }
    Pump();
  }

  void OnCancel() override EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      cancelled_ = true;
    }
    Pump();
  }

  void OnDone() override EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      done_ = true;
    }
    Cleanup();
    bool last;
    {
      MutexLock lock(&mu_);
      cleaned_ = true;
      last = active_ == 0;
    }
    if (last) delete this;
  }

 protected:
  // With the stream's lock held and no write in flight: fill *message and return kWrite, set
  // *status and return kFinish, or return kNothing (wait for the next event).
  virtual Step Next(Message* message, grpc::Status* status) REQUIRES(mu_) = 0;
  virtual void Cleanup() = 0;

  Mutex mu_;  // the stream's lock

 private:
  void Release() EXCLUDES(mu_) {
    bool last;
    {
      MutexLock lock(&mu_);
      last = --active_ == 0 && cleaned_;
    }
    if (last) delete this;
  }

  // Written by Next() under mu_, read by gRPC during the write that follows (outside mu_): only
  // while no write is in flight, which writing_ (under mu_) tells. So not GUARDED_BY.
  Message message_;
  int active_ GUARDED_BY(mu_) = 0;
  bool writing_ GUARDED_BY(mu_) = false;
  bool finished_ GUARDED_BY(mu_) = false;
  bool cancelled_ GUARDED_BY(mu_) = false;
  bool done_ GUARDED_BY(mu_) = false;
  bool cleaned_ GUARDED_BY(mu_) = false;
};

}  // namespace tunefarm::service

#endif  // TUNEFARM_SERVICE_EVENT_STREAM_H_
