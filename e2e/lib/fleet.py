"""An admin HTTPS client straight to the apiserver, for the chaos suite and the benchmarks. The
processes of their fleets are the members of e2e.lib.members."""

import http.client
import json
import ssl


class Admin:
    """Admin HTTPS client straight to the apiserver (not through any proxy)."""

    def __init__(self, cp):
        self.cp = cp
        self.ctx = ssl.create_default_context(cafile=cp.env["CA_CRT"])
        self.ctx.load_cert_chain(cp.env["ADMIN_CRT"], cp.env["ADMIN_KEY"])

    def request(self, method, path, body=None, timeout=3.0):
        c = http.client.HTTPSConnection(self.cp.host, int(self.cp.port), context=self.ctx,
                                        timeout=timeout)
        try:
            hdr = {"Content-Type": "application/json"} if body is not None else {}
            c.request(method, path, body=None if body is None else json.dumps(body), headers=hdr)
            r = c.getresponse()
            data = r.read()
            try:
                return r.status, json.loads(data)
            except ValueError:
                return r.status, data
        finally:
            c.close()


