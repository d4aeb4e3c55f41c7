package cluster

import "testing"

func TestDefaultRoute(t *testing.T) {
	gw, dev, err := defaultRoute("default via 10.244.0.1 dev eth0 \n")
	if err != nil || gw != "10.244.0.1" || dev != "eth0" {
		t.Errorf("defaultRoute = %q, %q, %v", gw, dev, err)
	}
	if _, _, err := defaultRoute("10.244.0.0/24 dev eth0 proto kernel scope link src 10.244.0.95\n"); err == nil {
		t.Error("no default route, no error")
	}
}
