"""A local HTTP server (127.0.0.1, a free port, in a thread) for the tests of downloads: the
``server`` fixture, which also serves as the Gluon repository (MXNET_GLUON_REPO), and ``serve``,
a route that answers with a body.

Import the fixture into a test module (``from local_http import server``) to use it."""
import collections
import http.server
import threading

import pytest


def serve(body, chunks=1):
    """A route that answers 200 with ``body`` (sent in ``chunks`` writes)."""
    def route(handler):
        handler.send_response(200)
        handler.send_header('Content-Length', str(len(body)))
        handler.end_headers()
        step = -(-len(body) // chunks)
        for start in range(0, len(body), step):
            handler.wfile.write(body[start:start + step])
            handler.wfile.flush()
    return route


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):                       # noqa: N802 - the http.server name
        self.server.requests.append(self.path)
        route = self.server.routes.get(self.path)
        if route is None:
            self.send_error(404)
        elif isinstance(route, bytes):
            serve(route)(self)
        else:
            route(self)

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    """``routes`` maps a path to the bytes to answer with or to a route (a function of the
    request handler); ``requests`` lists the paths asked for, in order."""

    def __init__(self):
        self.routes = {}
        self.requests = []
        super().__init__(('127.0.0.1', 0), _Handler)

    @property
    def hits(self):
        """collections.Counter: the requests per path."""
        return collections.Counter(self.requests)

    def url(self, path):
        """The full URL of ``path`` on this server."""
        return 'http://127.0.0.1:%d%s' % (self.server_port, path)


@pytest.fixture
def server(monkeypatch, tmp_path):
    """A running ``Server``, which is also MXNET_GLUON_REPO. MXNET_HOME points into
    ``tmp_path``, so nothing can reach the real ~/.mxnet, and no proxy is used for it."""
    monkeypatch.setenv('MXNET_HOME', str(tmp_path / 'mxnet_home'))
    for name in ('NO_PROXY', 'no_proxy'):        # a proxy from the environment must not be used
        monkeypatch.setenv(name, '127.0.0.1')
    httpd = Server()
    monkeypatch.setenv('MXNET_GLUON_REPO', httpd.url('/'))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={'poll_interval': 0.05},
                              daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join()
