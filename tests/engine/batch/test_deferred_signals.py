"""While a batch pool runs, SIGINT/SIGTERM are noted and raised only where the parent checks
(a KeyboardInterrupt raised inside concurrent.futures' wait left a future's lock held, and
the pool's manager thread waited for it for ever)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from hexscope.engine.batch.deferred_signals import signals_deferred


def test_a_ctrl_c_is_held_until_check_then_raised_there():
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with signals_deferred() as signals:
            os.kill(os.getpid(), signal.SIGINT)
            reached.append("after the signal")       # not raised here
            signals.check()
            reached.append("after check")            # raised there
    assert reached == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_signal_noted_at_the_end_of_the_block_is_raised_on_leaving_it():
    with pytest.raises(KeyboardInterrupt):
        with signals_deferred():
            os.kill(os.getpid(), signal.SIGINT)


def test_the_previous_handler_decides_what_a_signal_does():
    class Stop(Exception):
        pass

    def stop(signum, frame):
        raise Stop(signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        with pytest.raises(Stop) as caught:
            with signals_deferred() as signals:
                os.kill(os.getpid(), signal.SIGTERM)
                signals.check()
        assert caught.value.args == (signal.SIGTERM,)
        assert signal.getsignal(signal.SIGTERM) is stop
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with signals_deferred() as signals:          # an ignored signal stays ignored
            os.kill(os.getpid(), signal.SIGTERM)
            signals.check()
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_no_signal_nothing_happens_and_off_the_main_thread_nothing_changes():
    with signals_deferred() as signals:
        signals.check()
    seen = []

    def worker():
        with signals_deferred() as signals:
            seen.append(signal.getsignal(signal.SIGINT))
            signals.check()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [signal.default_int_handler]
