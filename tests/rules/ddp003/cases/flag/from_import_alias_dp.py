"""GAN training that imports DataParallel under a short alias; both networks get
wrapped, so there are two findings."""
import torch
import torch.nn as nn
from torch.nn import DataParallel as DP
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

from dcgan import Discriminator, Generator, weights_init

NZ = 100


def main():
    tf = transforms.Compose([transforms.Resize(64), transforms.CenterCrop(64), transforms.ToTensor(),
                             transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
    faces = datasets.ImageFolder("/data/celeba", transform=tf)
    loader = DataLoader(faces, batch_size=512, shuffle=True, num_workers=8)

    netG = Generator(NZ).cuda()
    netD = Discriminator().cuda()
    netG.apply(weights_init)
    netD.apply(weights_init)
    netG = DP(netG)  # <- DDP003
    netD = DP(netD)  # <- DDP003

    criterion = nn.BCEWithLogitsLoss()
    optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))

    for epoch in range(25):
        for real, _ in loader:
            real = real.cuda()
            b = real.size(0)
            noise = torch.randn(b, NZ, 1, 1, device="cuda")
            fake = netG(noise)

            optD.zero_grad()
            d_loss = criterion(netD(real).view(-1), torch.ones(b, device="cuda")) + \
                criterion(netD(fake.detach()).view(-1), torch.zeros(b, device="cuda"))
            d_loss.backward()
            optD.step()

            optG.zero_grad()
            g_loss = criterion(netD(fake).view(-1), torch.ones(b, device="cuda"))
            g_loss.backward()
            optG.step()
        print(f"[{epoch}] D {d_loss.item():.3f} G {g_loss.item():.3f}")
        torch.save(netG.module.state_dict(), f"netG_{epoch}.pt")


if __name__ == "__main__":
    main()
